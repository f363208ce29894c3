#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs what is missing, builds Release, and tunes
# the 4096^3 BF16 GEMM (`kerntune tune --op gemm --shape 4096x4096x4096`). With a GPU it measures;
# without one it compiles the candidates and stores the model's prediction. Extra arguments go
# to `kerntune tune` (e.g. --db my.db, --shape 8192x8192x8192). Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install_deps.sh
# The CLI, and libkerntune.so that the C/C++ consumers and the Python package load.
bash scripts/configure_build.sh kerntune kerntune_runtime kerntune-worker
"${KT_BUILD_DIR:-build}/src/tools/kerntune" tune --op gemm --shape 4096x4096x4096 "$@"
