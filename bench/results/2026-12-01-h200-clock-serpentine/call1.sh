#!/usr/bin/env bash
# Session 11, call 1: (a) the SMs' clock during our main loops (trace's new %clock64 reading),
# with the GPU's power draw sampled by nvidia-smi; (b) config-only candidates benched beside
# cuBLASLt: 1536^2 pairs with cuBLASLt's 6-stage ring (s6 e1: fits only with one epilogue slot),
# raster group 16 at 4096^3 / 8192^3 (a wave's footprint 16 x 8 tiles: ~20% fewer DRAM bytes),
# pairs at 4096^3 / 8192^3; (c) measured only: 512^2 pairs and 64 x 4096^2 cn2 after the exit fix.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
export PATH="$PWD/dist/bin:$PATH"
t0=$(date +%s)
{ date -u; cat dist/COMMIT; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit,enforced.power.limit --format=csv; } > "$R/session.log" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 20 > "$R/smi.csv" 2>&1 &
SMI=$!
mark() { echo "$(date +%s.%N) $1" >> "$R/marks.log"; }
show() { printf '%-22s ' $1; grep -E "CTAs, launch|first stage full|main loop done|SM clock|rror|fail" "$2" | sed -E 's/gemm:bf16:bf16:nt:[^ ]+ //; s/us median.*check/check/; s/SM clock, entry to main loop done/clk/' | tr -s ' ' | cut -c1-80 | tr '\n' '|'; echo; }
tr1() {  # name shape config
  mark "trace $1"; timeout 60 kerntune trace --per-cta --shape $2 --config $3 > "$R/tr_$1.log" 2>&1; show $1 "$R/tr_$1.log"; }
tr1 s1536_cl1 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
tr1 s1536_cl2s6e1 1536x1536x8192 sm90.bm128.bn144.bk64.s6.c2.e1.cl2.g8.sk1
tr1 s1536_cl2s4 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl2.g8.sk1
tr1 s4096_cl1 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
tr1 s8192_cl1 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
tr1 k32k_cl1 512x512x32768 sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g8.sk8
tr1 d64_cl1 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1
echo "traces at $(( $(date +%s) - t0 )) s"
cb() {  # name shape config: tune that config alone, then bench it beside cuBLASLt
  mark "bench $1"
  KERNTUNE_DB="$R/$1.db" timeout 60 kerntune tune --shape $2 --config $3 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 60 kerntune bench --shape $2 --rounds 8 --csv "$R/b.csv" > "$R/b_$1.log" 2>&1
  printf '%-22s ' $1; grep -E "^gemm" "$R/b_$1.log" | awk '{print $4, $5, $(NF-2), $(NF-1)}'
  rm -f "$R/$1.db"*
}
for pass in 1 2; do
  cb s1536_cl1_$pass 1536x1536x8192 sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1
  cb s1536_cl2s6e1_$pass 1536x1536x8192 sm90.bm128.bn144.bk64.s6.c2.e1.cl2.g8.sk1
  cb s1536_cl1s6e1_$pass 1536x1536x8192 sm90.bm128.bn144.bk64.s6.c2.e1.cl1.g8.sk1
  cb s1536_cl2s5_$pass 1536x1536x8192 sm90.bm128.bn144.bk64.s5.c2.e2.cl2.g8.sk1
  cb s4096_g8_$pass 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
  cb s4096_g16_$pass 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
  cb s4096_cl2g16_$pass 4096x4096x4096 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g16.sk1
  cb s8192_g8_$pass 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g8.sk1
  cb s8192_g16_$pass 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl1.g16.sk1
  cb s8192_cl2g16_$pass 8192x8192x8192 sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g16.sk1
  echo "pass $pass at $(( $(date +%s) - t0 )) s"
done
mark "measure 512 and decode"
KERNTUNE_DB="$R/m.db" timeout 90 kerntune tune --shape 512x512x32768 --config sm90.bm128.bn128.bk64.s6.c2.e0.cl1.g8.sk8 --config sm90.bm64.bn128.bk64.s8.c1.e0.cl2.g8.sk4 --config sm90.bm128.bn128.bk64.s6.c2.e0.cl2.g8.sk8 --config sm90.bm64.bn128.bk64.s8.c1.e0.cl1.g8.sk4 > "$R/t_k32k.log" 2>&1
KERNTUNE_DB="$R/m.db" timeout 90 kerntune tune --shape 64x4096x4096 --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1 --config sm90.bm64.bn32.bk128.s8.c1.e0.cn2.g8.sk1.swab --config sm90.bm64.bn32.bk64.s16.c1.e0.cn2.g8.sk1.swab --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1.swab > "$R/t_d64.log" 2>&1
KERNTUNE_DB="$R/m.db" kerntune cache export "$R/m_measurements.csv" >/dev/null 2>&1
grep -E "^measurement" "$R/m_measurements.csv" | cut -d, -f2,6,8,9 | sort -t, -k1,1 -k3n
kill $SMI 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >> "$R/session.log" 2>&1
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz -e b.csv -e smi.csv -e marks.log | xargs rm -f)
echo "done at $(( $(date +%s) - t0 )) s"
