#!/usr/bin/env bash
# Session 21, call 2: the decode suite tuned afresh twice (two processes, two draws of the
# operands' placement) and each tune benched four times beside cuBLASLt and the copy: how the
# decode lines, 64 x 4096^2's 80% above all, sit over repeated runs at 36727fc.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
for t in 1 2; do
  export KERNTUNE_DB="$R/k$t.db"
  timeout 200 $K tune --suite decode > "$R/dtune$t.log" 2>&1; echo "decode tune $t rc $? at $(( $(date +%s) - t0 )) s"
  $K cache ls > "$R/winners$t.txt" 2>&1
  for i in 1 2 3 4; do
    timeout 90 $K bench --suite decode --rounds 6 --csv "$R/dbench${t}_$i.csv" > "$R/dbench${t}_$i.log" 2>&1
    grep -E "^gemm" "$R/dbench${t}_$i.log" | awk '{print $1, $2, $(NF-2), $(NF-1), $NF}'
  done
  $K cache export "$R/measurements$t.csv" > /dev/null 2>&1; gzip "$R/measurements$t.csv"
done
echo "done at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls | grep -v measurements) && (cd "$R" && ls | grep -v -e logs.tgz -e measurements | xargs rm -f)
