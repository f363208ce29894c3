#!/usr/bin/env bash
# Session 20, call 5 (c7f3ca9): 64 x 4096^2's swapped 64 x 32 bk128 tile, stages 8 and 9 by
# raster groups 1 and 8, to separate which of s9 and g8 made last session's pick bench at 63-68%
# of the copy: each tuned alone and benched, three passes alternated; then all four tuned in one
# process (the tuner's interleaved finalists) beside the benches' figures.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
K="$PWD/dist/bin/kerntune"
{ date -u; echo "build $(cat dist/COMMIT)"; } > "$R/session.log" 2>&1
cb() {  # name shape config
  KERNTUNE_DB="$R/$1.db" timeout 90 $K tune --shape $2 --config $3 > "$R/t_$1.log" 2>&1
  KERNTUNE_DB="$R/$1.db" timeout 90 $K bench --shape $2 --rounds 8 --csv "$R/b_$1.csv" > "$R/b_$1.log" 2>&1
  printf '%-10s %-48s ' $1 $3; python3 - "$R/b_$1.csv" <<'PY'
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
print(f"{float(r['kerntune_us']):6.2f} us  cublaslt {float(r['cublaslt_us']):6.2f}  copy {float(r['copy_us']):6.2f}  {100 * float(r['of_copy']):.1f}% of copy  {float(r['ratio']):.3f}x")
PY
  rm -f "$R/$1.db"*
}
for pass in 1 2 3; do
  for c in s8.c1.e0.cl1.g1 s8.c1.e0.cl1.g8 s9.c1.e0.cl1.g1 s9.c1.e0.cl1.g8; do
    cb ${c//./}_$pass 64x4096x4096 sm90.bm64.bn32.bk128.$c.sk1.swab
  done
done
KERNTUNE_DB="$R/all.db" timeout 120 $K tune --shape 64x4096x4096 --finalists 4 \
  --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab --config sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g8.sk1.swab \
  --config sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g1.sk1.swab --config sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1.swab > "$R/tune_all.log" 2>&1
grep -E "winner|runner" "$R/tune_all.log"
KERNTUNE_DB="$R/all.db" $K cache export "$R/all.csv" > /dev/null 2>&1
python3 - "$R/all.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r['kind'] == 'measurement': print(r['config_key'], r['median_us'][:6], r['detail'][:40])
PY
rm -f "$R"/*.db*
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
