#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, KT_BUILD_FUZZERS) with clang in a build directory of
# their own and runs each for ${KT_FUZZ_SECONDS:-60} s, ${KT_FUZZ_JOBS:-2} at a time, starting
# from the committed seeds in tests/fuzz/corpus/<name> (which are only read). Prints, per fuzzer,
# the inputs tried (libFuzzer's "Done N runs") and the crashes; exits non-zero when any fuzzer
# crashed, timed out or leaked. Reproducers and logs: ${KT_FUZZ_BUILD_DIR:-build-fuzz}/fuzz-runs/.
# Reproduce one with: build-fuzz/tests/fuzz/<name> build-fuzz/fuzz-runs/<name>/findings/<file>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export KT_FUZZ_SECONDS=${KT_FUZZ_SECONDS:-60}
export KT_FUZZ_BUILD_DIR=${KT_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${KT_FUZZ_JOBS:-2}

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$KT_FUZZ_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKT_BUILD_TESTS=OFF \
  -DKT_BUILD_FUZZERS=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" >/dev/null
ninja -C "$KT_FUZZ_BUILD_DIR" kt_fuzzers

# One fuzzer: new inputs go to a working corpus, the seeds stay as committed.
run_one() {
  local name=$1
  local work=$KT_FUZZ_BUILD_DIR/fuzz-runs/$name
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/findings"
  "$KT_FUZZ_BUILD_DIR/tests/fuzz/$name" -max_total_time="$KT_FUZZ_SECONDS" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/findings/" \
    "$work/corpus" "tests/fuzz/corpus/$name" >"$work/log" 2>&1 || true
}
export -f run_one

fuzzers=()
for source in tests/fuzz/fuzz_*.cpp; do
  name=$(basename "$source" .cpp)
  fuzzers+=("$name")
done
echo "run_fuzzers: ${#fuzzers[@]} fuzzers, ${KT_FUZZ_SECONDS} s each, $jobs at a time"
printf '%s\n' "${fuzzers[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'

failed=0
printf '%-24s %12s %8s\n' fuzzer inputs crashes
for name in "${fuzzers[@]}"; do
  work=$KT_FUZZ_BUILD_DIR/fuzz-runs/$name
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$work/log" | tail -1)
  crashes=$(find "$work/findings" -type f | wc -l)
  printf '%-24s %12s %8s\n' "$name" "${runs:-none}" "$crashes"
  if [[ -z $runs || $crashes -ne 0 ]]; then
    failed=1
    echo "run_fuzzers: $name failed; the end of $work/log:" >&2
    tail -n 30 "$work/log" >&2
  fi
done
exit "$failed"
