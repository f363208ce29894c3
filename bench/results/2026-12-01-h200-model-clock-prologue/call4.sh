#!/usr/bin/env bash
# Session 20, call 4 (c7f3ca9): the decode picks' near-ties, alternated. 1 x 4096^2's swapped
# 64 x 16 tile with bk128 s9 (this session's tuned pick, 80-81% of the copy) against bk256 s5
# (the last sessions' pick, 82%); 64 x 4096^2's swapped 64 x 32 bk128 s8 g1 (this session's)
# against s9 g8 (the last session's). Each tuned alone, then benched beside cuBLASLt and the copy.
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
for pass in 1 2 3 4; do
  cb m1a_$pass 1x4096x4096 sm90.bm64.bn16.bk128.s9.c1.e0.cl1.g1.sk1.swab
  cb m1b_$pass 1x4096x4096 sm90.bm64.bn16.bk256.s5.c1.e0.cl1.g1.sk1.swab
  cb m64a_$pass 64x4096x4096 sm90.bm64.bn32.bk128.s8.c1.e0.cl1.g1.sk1.swab
  cb m64b_$pass 64x4096x4096 sm90.bm64.bn32.bk128.s9.c1.e0.cl1.g8.sk1.swab
done
tar czf "$R/logs.tgz" -C "$R" $(cd "$R" && ls) && (cd "$R" && ls | grep -v -e logs.tgz | xargs rm -f)
