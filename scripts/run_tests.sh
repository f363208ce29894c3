#!/usr/bin/env bash
# Every test from a fresh Debian 12 machine: installs what is missing, builds Release with the
# tests, and runs CTest: labels cpu (no CUDA), nvrtc (the toolkit, no GPU), gpu (skip themselves
# without a device) and package (installs the build and builds tests/package against it).
# CTest's summary is the last thing printed. Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install_deps.sh
bash scripts/configure_build.sh

# GPU tests share one device: run serially where there is one, in parallel where there is none.
jobs=${KT_TEST_JOBS:-$(nproc)}
if [[ -z ${KT_TEST_JOBS:-} && -e /dev/nvidia0 ]]; then jobs=1; fi
cd "${KT_BUILD_DIR:-build}"
ctest --output-on-failure --parallel "$jobs"
