#!/usr/bin/env bash
# Session 19, call 3: how much of a launch lies in the SMs' shared-memory reconfiguration after
# the L2 flush. The flush kernel (no shared memory) runs with the driver's default carveout, or
# (KT_DIAG_FLUSH_CARVEOUT=100) preferring the largest shared-memory carveout, the one every sm90
# GEMM (and cuBLASLt's) needs; the copy (cuMemcpyDtoD) needs none. Each pick tuned alone (verified)
# and benched beside cuBLASLt and the copy, default and 100 alternated, two passes; a trace of the
# 64 x 4096^2 pick under each.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
run() { local v=$1; shift; if [ $v = c100 ]; then KT_DIAG_FLUSH_CARVEOUT=100 timeout 60 $K "$@"; else timeout 60 $K "$@"; fi; }
cb() {  # name variant shape config
  export KERNTUNE_DB="$R/$1.db"
  run $2 tune --shape $3 --config $4 > "$R/t_$1.log" 2>&1
  run $2 bench --shape $3 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-22s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-3), $(NF-2), $(NF-1), $NF}'
  rm -f "$R/$1.db"*; unset KERNTUNE_DB
}
for v in def c100; do
  run $v trace --per-cta --reps 20 --shape 64x4096x4096 --config sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1 > "$R/tr_$v.log" 2>&1
  printf '%-5s ' $v; grep -E "CTAs, launch|first load|main loop done|C stored" "$R/tr_$v.log" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/' | tr -s ' ' | cut -c1-70 | tr '\n' '|'; echo
done
while read -r name S C; do
  for pass in 1 2; do for v in def c100; do cb ${name}_${v}_$pass $v $S $C; done; done
done <<'LIST'
m1 1x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab
m16 16x4096x4096 sm90.bm64.bn16.bk128.s8.c1.e0.cl1.g1.sk1.swab
m64 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1
w14336 64x14336x4096 sm90.bm64.bn128.bk64.s6.c1.e2.cl1.g1.sk1
s512 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e2.cl1.g8.sk8
s1536 1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl1.g1.sk1
LIST
echo "benches at $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e b.csv | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
