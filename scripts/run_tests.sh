#!/usr/bin/env bash
# Every test from a fresh Debian 12 machine: installs what is missing, builds Release with the
# tests, and runs CTest: labels cpu (no CUDA), nvrtc (the toolkit, no GPU), gpu (skip themselves
# without a device) and package (installs the build and builds tests/package against it).
# Then the fuzzers (scripts/run_fuzzers.sh, ${KT_FUZZ_SECONDS:-60} s each; KT_FUZZ_SECONDS=0
# skips them), and formatting is checked first (scripts/check_format.sh). Exits non-zero when any
# of the three failed; the fuzzers' table is printed last.
# Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install_deps.sh
format_status=0
bash scripts/check_format.sh || format_status=$?
bash scripts/configure_build.sh

# GPU tests share one device: run serially where there is one, in parallel where there is none.
jobs=${KT_TEST_JOBS:-$(nproc)}
if [[ -z ${KT_TEST_JOBS:-} && -e /dev/nvidia0 ]]; then jobs=1; fi
ctest_status=0
(cd "${KT_BUILD_DIR:-build}" && ctest --output-on-failure --parallel "$jobs") || ctest_status=$?

fuzz_status=0
if [[ ${KT_FUZZ_SECONDS:-60} != 0 ]]; then bash scripts/run_fuzzers.sh || fuzz_status=$?; fi
if ((ctest_status != 0 || fuzz_status != 0 || format_status != 0)); then
  echo "run_tests: ctest exit $ctest_status, fuzzers exit $fuzz_status," \
       "format check exit $format_status" >&2
  exit 1
fi
