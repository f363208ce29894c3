#!/usr/bin/env bash
# Session 14, call 2: the direct-store epilogue (e0). Each lane stores 4-byte pairs into 8 rows a
# warp instruction (16 bytes a row, half a sector); KT_DIAG_ST16 exchanges pairs within each quad
# so a lane stores 16 bytes (a warp instruction: 8 rows x 64 bytes), KT_DIAG_NOSTORE skips the
# stores (the bound on any epilogue gain; its check fails). Traces alternated twice.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
show() { printf '%-44s ' "$1"; grep -E "CTAs, launch|main loop done|C stored" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ sm90[^:]+: //' | tr -s ' ' | sed -E 's/ \(us after.*//' | cut -c1-80 | tr '\n' '|'; echo; }
run() {  # tag shape config diag rep
  KT_DIAG=$4 timeout 60 kerntune trace --reps 60 --shape $2 --config $3 > "$R/$1_$4_$5.log" 2>&1
  show "$1 $4 $5" "$R/$1_$4_$5.log"
}
for rep in 1 2; do
  for d in KT_DIAG_NONE KT_DIAG_ST16 KT_DIAG_NOSTORE; do
    run d64 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 $d $rep
    run d14336 64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e0.cl1.g1.sk1 $d $rep
    run s2048 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e0.cl1.g8.sk1 $d $rep
  done
  run d14336e2 64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1 KT_DIAG_NONE $rep
  run s2048e2 2048x2048x2048 sm90.bm128.bn256.bk64.s3.c2.e2.cl1.g8.sk1 KT_DIAG_NONE $rep
  for d in KT_DIAG_NONE KT_DIAG_ST16; do
    run s4096 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1 $d $rep
  done
  run s4096e2 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1 KT_DIAG_NONE $rep
done
run r4100 4100x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e0.cl1.g8.sk1 KT_DIAG_ST16 1
run r4100 4100x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 KT_DIAG_ST16 2
grep -H "check" "$R"/*ST16*.log | sed -E 's/.*(check [a-z]+).*/\1/' | sort | uniq -c
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
