#!/usr/bin/env bash
# Session 3, call 4: prologue probe (extra trace marks: published = barriers initialized, flags ready = init fence done, C stored = after the CTA barrier, epoch read = first unit's loads about to start).
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT/r"; R="$OUT/r"
export PATH="$PWD/.carry/pdist/bin:$PATH"
export LD_LIBRARY_PATH="$PWD/.carry/pdist/lib:${LD_LIBRARY_PATH:-}"
timeout 60 kerntune trace --shape 64x4096x4096 --config sm90.bm64.bn32.bk64.s12.c1.e0.cl1.g1.sk1 --config sm90.bm64.bn32.bk64.s4.c1.e0.cl1.g1.sk1 > "$R/trace.log" 2>&1
timeout 60 kerntune trace --shape 1536x1536x8192 --config sm90.bm128.bn144.bk64.s4.c2.e2.cl1.g8.sk1 >> "$R/trace.log" 2>&1
grep -v "^ *cta" "$R/trace.log" | head -60
cd "$OUT" && tar czf r.tgz r && rm -rf r
