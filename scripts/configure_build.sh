#!/usr/bin/env bash
# Configures (once) and builds kerntune in Release with Ninja: `configure_build.sh [TARGET...]`
# builds the named targets, or everything. $KT_BUILD_DIR (default build) is the build folder,
# $KT_JOBS (default: every core) the parallelism, $CUDA_HOME (default /usr/local/cuda) the toolkit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${KT_BUILD_DIR:-build}
generator=()
[[ -f $build_dir/CMakeCache.txt ]] || generator=(-G Ninja)
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DKT_BUILD_TESTS=ON -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}"

targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build_dir" --parallel "${KT_JOBS:-$(nproc)}" "${targets[@]}"
