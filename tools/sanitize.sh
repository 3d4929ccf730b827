#!/usr/bin/env bash
# Build cclust's compiled cores with AddressSanitizer + UndefinedBehaviorSanitizer in a copy of
# the checkout and run the test suite against that build.
#
#   tools/sanitize.sh                      # whole suite
#   tools/sanitize.sh tests/test_ensemble.py -k contingency   # extra args go to pytest
#
# Environment:
#   SANITIZE_DIR   where to put the copy (default: a fresh mktemp -d, removed on success)
#   SANITIZE_KEEP  set to 1 to keep the copy even on success
#   CC / CXX       compiler (default gcc / g++; the runtime below is found through $CC)
#
# The checkout itself is never touched: its in-place .so files stay the optimised build.
# Exit status: pytest's (non-zero on a test failure or on any sanitizer report, because
# UBSan halts on error and ASan aborts the process).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CC="${CC:-gcc}"
CXX="${CXX:-g++}"
PYTHON="${PYTHON:-python}"
work="${SANITIZE_DIR:-$(mktemp -d -t cclust-sanitize.XXXXXX)}"
mkdir -p "$work"

echo "== copying $repo to $work"
# Tracked and untracked-but-not-ignored files: the tree as it is now, without build products.
# (Files listed by git but deleted in the working tree are skipped.)
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$work" --)
find "$work/cclust/_ext" -name '*.so' -delete

echo "== building with -fsanitize=address,undefined"
(cd "$work" && CC="$CC" CXX="$CXX" CCLUST_SANITIZE=address,undefined \
    "$PYTHON" setup.py build_ext --inplace -q 2>&1 | grep -v '^warning: ' || true)
ls "$work"/cclust/_ext/*.so > /dev/null  # fail here if the build produced nothing

asan="$("$CC" -print-file-name=libasan.so)"
ubsan="$("$CC" -print-file-name=libubsan.so)"
if [ ! -e "$asan" ]; then
    echo "cannot find libasan.so through $CC; install the compiler's sanitizer runtime" >&2
    exit 2
fi

echo "== running the tests under the sanitizers"
status=0
(
    cd "$work"
    # CPython's own allocations look like leaks to LeakSanitizer; we look for memory errors and
    # undefined behaviour only. The Python interpreter is not instrumented, so ASan must be the
    # first library loaded: LD_PRELOAD.
    export LD_PRELOAD="$asan:$ubsan"
    export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_init_order=1:detect_stack_use_after_return=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
    export PYTHONPATH="$work${PYTHONPATH:+:$PYTHONPATH}"
    export PYTHONMALLOC=malloc  # let ASan see Python-side buffers too (NumPy uses malloc anyway)
    "$PYTHON" -m pytest -q -p no:cacheprovider "$@"
) || status=$?

if [ "$status" -eq 0 ] && [ -z "${SANITIZE_DIR:-}" ] && [ "${SANITIZE_KEEP:-0}" != 1 ]; then
    rm -rf "$work"
else
    echo "== the sanitized copy is kept in $work"
fi
echo "== sanitizer run finished with status $status"
exit "$status"
