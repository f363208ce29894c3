#!/usr/bin/env bash
# Installs, on Debian 12 (or Ubuntu), the packages that building and testing kerntune need and
# that are missing: nothing at all when everything is present, else one `apt-get update` and one
# `apt-get install`. Uses sudo only when not root. The CUDA toolkit is not installed here: it is
# expected at $CUDA_HOME (default /usr/local/cuda), and this script fails early if it is not.
set -euo pipefail

# clang and libclang-rt-14-dev (libFuzzer and the sanitizers): scripts/run_fuzzers.sh only;
# clang-format: scripts/check_format.sh; python3-pip and pkgconf: the package test builds and
# installs the Python wheel and builds a consumer through pkg-config (scripts/test_package.sh).
# python3-torch: a CPU-only PyTorch (1.13 on Debian 12) for the cpu tier's checks of kerntune.ops
# (python/tests/test_ops_no_gpu.py: the fake implementations under FakeTensorMode, the argument
# errors, the operands gemm copies); no GPU test uses it (they need a CUDA PyTorch).
# slurm-wlm and munge: the deploy.slurm_fleet test (tests/deploy/slurm_fleet_test.sh) starts a
# single-node Slurm cluster and runs deploy/slurm/'s array and merge jobs on it; python3-yaml:
# deploy.k8s_manifests parses deploy/k8s/'s Jobs. The test runs daemons of its own on free ports,
# whatever the packages' services do.
# python3-matplotlib: `kerntune report` draws its plots with it (python/kerntune/report.py);
# chromium: the report.screenshot test renders a report in headless Chromium and checks that the
# screenshot shows the plots.
packages=(build-essential cmake ninja-build libfmt-dev libspdlog-dev libsqlite3-dev libcli11-dev
          libgtest-dev clang libclang-rt-14-dev clang-format python3-pip pkgconf python3-torch
          slurm-wlm munge python3-yaml python3-matplotlib chromium)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "install_deps: missing ${missing[*]}, and this is not root and there is no sudo" >&2
    exit 1
  fi
  echo "install_deps: installing ${missing[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
for file in include/cuda.h include/nvrtc.h; do
  if [[ ! -e $cuda_home/$file ]]; then
    echo "install_deps: no CUDA toolkit at $cuda_home ($file is missing): install the CUDA 13" \
         "toolkit there, or set CUDA_HOME to where it is" >&2
    exit 1
  fi
done
