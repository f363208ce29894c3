#!/usr/bin/env bash
# GEMM shapes (default: the foundation suite; or one MxNxK shape) tuned, then benched beside cuBLASLt in one process, twice (or N times).
# Run on the GPU machine from the repository root with dist/ installed: bash bench/gemm_vs_cublaslt.sh RESULTS_DIR [SUITE|MxNxK] [N]
# Writes session.txt, tune.log, bench1.csv .. benchN.csv, measurements.csv into RESULTS_DIR; prints the ratio table.
set -euo pipefail
out=${1:?usage: bash bench/gemm_vs_cublaslt.sh RESULTS_DIR [SUITE|MxNxK] [BENCHES]}
what=${2:-foundation}
benches=${3:-2}
source "$(dirname "$0")/session.sh"
if [[ $what =~ ^[0-9]+x[0-9]+x[0-9]+$ ]]; then problem=(--shape "$what"); else problem=(--suite "$what"); fi
kerntune tune "${problem[@]}" >"$out/tune.log" 2>"$out/tune_progress.log"
for i in $(seq "$benches"); do
  rm -f "$out/bench$i.csv"
  kerntune bench "${problem[@]}" --rounds 6 --csv "$out/bench$i.csv"
done
kerntune cache export "$out/measurements.csv" >/dev/null
# The table: cuBLASLt time over kerntune's (> 1: kerntune faster) per shape and bench, and the
# median over the benches.
echo
for i in $(seq "$benches"); do tail -n +2 "$out/bench$i.csv"; done | awk -F, -v n="$benches" '
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++rows] = key }
    r[key] = r[key] " " sprintf("%.3f", $13); v[key, ++c[key]] = $13 }
  END { for (i = 1; i <= rows; i++) { k = order[i]; m = c[k]
          for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++)
            if (v[k, b] < v[k, a]) { t = v[k, a]; v[k, a] = v[k, b]; v[k, b] = t }
          med = (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
          printf "%-82s median %.3f:%s\n", k, med, r[k] } }'
