#!/usr/bin/env bash
# The repository's single test command: Rust format, lints and tests, the Python package
# (built and installed into .venv) with its lints and tests, end to end through the CLI.
#
#   ./scripts/test.sh
#
# Creates .venv (with $PYTHON, default python3, >= 3.11) when it is missing and installs the
# pinned Python tools into it. Every step runs even after one fails; then a line says PASS or
# FAIL and names the failed steps, and the last line counts the tests run
# ("tests: N passed, M failed, K skipped", cargo's and pytest's together). CI=true adds
# --locked to cargo (Cargo.lock must be current).
# Honours CARGO_TARGET_DIR (default target/). Fails (step temp-files) when the suite leaves new
# flashlane-*, pytest-of-* or dask-scratch-space entries in ${TMPDIR:-/tmp}.
set -euo pipefail

MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0
RUFF_VERSION=0.17.6
POLARS_VERSION=2.1.0
MATPLOTLIB_VERSION=3.11.2
TQDM_VERSION=4.70.1
# The dask extra (flashlane.sweep on a Dask cluster); tests/python/test_sweep.py starts a
# LocalCluster with it.
DASK_VERSION=2026.8.0

cd "$(dirname "$0")/.."
repo=$(pwd)
venv="$repo/.venv"
python=${PYTHON:-python3}
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case $target_dir in /*) ;; *) target_dir="$repo/$target_dir" ;; esac
locked=()
if [[ ${CI:-} == true ]]; then
    locked=(--locked)
    export CARGO_TERM_COLOR=never
fi

if [[ ! -x $venv/bin/python ]]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        { echo "test.sh: $python is older than 3.11; set PYTHON to a newer one" >&2; exit 2; }
    echo "==> creating $venv"
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION" "ruff==$RUFF_VERSION" \
    "polars==$POLARS_VERSION" "dask==$DASK_VERSION" "distributed==$DASK_VERSION" \
    "matplotlib==$MATPLOTLIB_VERSION" "tqdm==$TQDM_VERSION"

# tests/python/test_reproduce.py renders report.html in headless Chromium (Debian's package).
# Installed here when missing and we are root with apt-get. FLASHLANE_SKIP_BROWSER=1 skips that
# one test instead (counted as skipped); without Chromium and without it, the test fails.
if [[ ${FLASHLANE_SKIP_BROWSER:-} == 1 ]]; then
    echo "test.sh: FLASHLANE_SKIP_BROWSER=1: the report test in Chromium is skipped"
elif ! command -v chromium >/dev/null && command -v apt-get >/dev/null && ((EUID == 0)); then
    echo "==> installing chromium (apt-get; FLASHLANE_SKIP_BROWSER=1 skips this and its test)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
        >/dev/null || echo "test.sh: could not install chromium; the report test will fail" \
        "(install chromium, or set FLASHLANE_SKIP_BROWSER=1 to skip it)"
elif ! command -v chromium >/dev/null; then
    echo "test.sh: no chromium and no root apt-get to install it: the report test will fail" \
        "(install chromium, or set FLASHLANE_SKIP_BROWSER=1 to skip it)"
fi

# pip's build backend runs `maturin` from PATH; pyo3 builds against the venv's interpreter.
export PATH="$venv/bin:$PATH"
export PYO3_PYTHON="$venv/bin/python"
# The Python tests' CLI is the one the Rust integration tests built (cargo's test profile:
# our crates at opt-level 1, their dependencies at 2; Cargo.toml): a release build of it as
# well took 100-200 s of the suite's 10-minute budget on 2 cores. The Python package itself is
# built by pip (below).
export FLASHLANE_BIN="$target_dir/debug/flashlane"
# Every test must run here: a Python test that cannot (no Chromium, no CLI) fails
# instead of skipping (tests/python/conftest.py).
export FLASHLANE_NO_SKIPS=1

failed=()
started=$SECONDS
# The suite's own scratch directory, removed on exit: the log below and pytest's basetemp (the
# tmp_path of every Python test) live in it.
tmp=${TMPDIR:-/tmp}
scratch=$(mktemp -d "$tmp/flashlane-test-sh.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Every step's output is also kept here, to add up the tests run at the end.
log="$scratch/log"
# What tests leave in the temporary directory if they do not clean up (the Rust tests'
# flashlane-* files, pytest's pytest-of-USER, a Dask LocalCluster's dask-scratch-space); listed
# before and after the suite, which must add none. (Another user's run at the same time can
# add some too: the entries are named, so they can be told apart.)
leftovers() {
    find "$tmp" -mindepth 1 -maxdepth 1 \( -name 'flashlane-*' -o -name 'pytest-of-*' \
        -o -name dask-scratch-space \) ! -name "${scratch##*/}" -printf '%f\n' 2>/dev/null | sort
}
tmp_before=$(leftovers)
step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "==> $name: $*"
    if "$@" 2>&1 | tee -a "$log"; then
        echo "==> $name: ok ($((SECONDS - t0)) s)"
    else
        echo "==> $name: FAILED ($((SECONDS - t0)) s)"
        failed+=("$name")
    fi
}

step rustfmt cargo fmt --all --check
step clippy cargo clippy "${locked[@]}" --workspace --all-targets -- -D warnings
step cargo-test cargo test "${locked[@]}" --workspace --exclude flashlane-py
# The package the Python tests import, built without the release profile's link-time
# optimisation (and with more codegen units, no debug info): 87 s instead of 118 s on 2 cores,
# and no slower for the tests (the reproduce fixture took 76 s against 79 s). A user's
# `pip install .` keeps the release profile.
step pip-install env CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_DEBUG=0 python -m pip install --disable-pip-version-check \
    --no-build-isolation --no-deps --force-reinstall "$repo"
step ruff-check ruff check python tests/python scripts
step ruff-format ruff format --check python tests/python scripts
step pytest python -m pytest --basetemp "$scratch/pytest"

# Nothing new in the temporary directory.
left=$(comm -13 <(printf '%s\n' "$tmp_before") <(leftovers) | sed '/^$/d')
if [[ -n $left ]]; then
    echo "==> temp-files: FAILED: the suite left these in $tmp:"
    sed 's/^/    /' <<<"$left"
    failed+=("temp-files")
else
    echo "==> temp-files: ok (nothing new in $tmp)"
fi

# Tests run, from cargo's "test result: ok. N passed; M failed; K ignored" lines and pytest's
# closing "N passed, M failed, K skipped in T s" line.
read -r passed failed_tests skipped < <(
    {
        grep -Eo 'test result: [A-Za-z]+\. [0-9]+ passed; [0-9]+ failed; [0-9]+ ignored' "$log" |
            awk '{print $4, $6, $8}'
        grep -E '^=+ .*[0-9]+ (passed|failed).* in [0-9.]+s' "$log" | awk '{
            p = f = s = 0
            for (i = 2; i <= NF; i++) {
                n = $(i - 1) + 0; w = $i; sub(/,$/, "", w)
                if (w == "passed") p = n; else if (w == "failed") f = n; else if (w == "skipped") s = n
            }
            print p, f, s
        }'
    } | awk '{p += $1; f += $2; s += $3} END {print p + 0, f + 0, s + 0}'
)
# Rust tests that cannot run here say so on a line of their own ("SKIPPED (why): test: ...",
# e.g. the real-drive tests where the kernel forbids io_uring); libtest counts them as passed.
explicit_skips=$(grep -c '^SKIPPED (' "$log" || true)
passed=$((passed - explicit_skips))
skipped=$((skipped + explicit_skips))

echo
if ((${#failed[@]} == 0)); then
    echo "test.sh: PASS (all steps ok in $((SECONDS - started)) s)"
    status=0
else
    echo "test.sh: FAIL (${failed[*]}) after $((SECONDS - started)) s"
    status=1
fi
echo "tests: $passed passed, $failed_tests failed, $skipped skipped"
if ((explicit_skips > 0)); then
    grep '^SKIPPED (' "$log" | sed 's/^/    /'
fi
exit "$status"
