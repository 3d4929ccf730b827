// Contingency tables: how many objects fall in each (cluster, cluster) cell.
//
// Label matrices are n x r, row-major, int32, with -1 for "missing from this partition".
// Column j's labels lie in 0..K_j-1 and occupy the columns offsets[j]..offsets[j+1]-1 of the
// batched table. Every function writes into caller-allocated memory and throws
// std::invalid_argument (never crashes) on labels out of range.
#pragma once

#include <cstdint>

namespace cclust {

// Table of two labellings: out is ka x kb, row-major, overwritten. Pairs with a -1 are skipped.
void contingency_pair(const int64_t* a, const int64_t* b,  // IN n each
                      int64_t n, int64_t ka, int64_t kb,
                      int64_t* out,                        // OUT ka x kb
                      int n_threads);

// Smallest and largest label, in one pass (n >= 1).
void label_range(const int64_t* labels, int64_t n,
                 int64_t* low, int64_t* high);  // OUT

// Map arbitrary non-negative integer labels to 0..k-1 in increasing order of value. `max_value`
// bounds the values (a lookup table of max_value + 1 entries is used). Returns k. When every
// value 0..max_value occurs the codes are the labels themselves: *identity is set and `out` is
// not written (the caller uses the labels).
int64_t relabel_dense(const int64_t* labels, int64_t n, int64_t max_value,
                      int64_t* out,  // OUT n, unless *identity
                      bool* identity,  // OUT
                      int n_threads);

}  // namespace cclust
