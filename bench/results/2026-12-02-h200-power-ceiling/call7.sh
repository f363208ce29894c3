#!/usr/bin/env bash
# Session 23, call 7: does our own pair kernel's clock swing between processes as the probe's
# cluster launches did? 1536^2 x 8192's 128 x 144 tile unpaired (cl1) and in pairs (cl2), each
# traced in its own process, alternately, four passes.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
export KERNTUNE_DB="$R/k.db"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log"
for pass in 1 2 3 4; do
  for cl in cl1 cl2; do
    log="$R/t_${cl}_$pass.log"
    timeout 100 $K trace --reps 40 --shape 1536x1536x8192 --config sm90.bm128.bn144.bk64.s4.c2.e2.$cl.g8.sk1 > "$log" 2>&1
    printf '%s p%d ' $cl $pass
    grep -oE "launch [0-9.]+ us median \([0-9.]+ min|check [a-z]+" "$log" | tr '\n' ' '
    awk '/main loop done/ {printf "%s %s ", $1$2, $(NF-2)} /SM clock/ {printf "clk %s", $8}' "$log"; echo
  done
done
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v logs.tgz | xargs rm -f)
