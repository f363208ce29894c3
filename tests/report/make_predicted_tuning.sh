#!/usr/bin/env bash
# Writes tests/report/predicted_tuning.csv, the tuning results the report.screenshot test renders:
# five problems (GEMM square, ragged and decode, causal attention, RMSNorm with the residual) tuned
# for the h200 profile and one GEMM for the a100 profile, each without a GPU (--predict: the
# model's pick among the candidates NVRTC compiled, stored as predicted). Needs the CUDA toolkit,
# no GPU; about 40 s. A CSV rather than a database file: it is text, and it imports into a
# database of whatever schema the build has. Usage: make_predicted_tuning.sh [BUILD_DIR]
set -euo pipefail
kerntune=$(realpath "${1:-build}")/src/tools/kerntune
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
db=$scratch/predicted.db

"$kerntune" tune --predict --db "$db" --candidates 12 \
  --shape 2048x2048x2048 --shape 4100x4096x4096 --shape 16x4096x4096
"$kerntune" tune --predict --db "$db" --candidates 12 --op attention \
  --shape b=2,h=16,s=2048,d=128 --causal
"$kerntune" tune --predict --db "$db" --candidates 12 --op rmsnorm \
  --shape rows=8192,hidden=4096 --residual
"$kerntune" tune --predict --db "$db" --candidates 8 --device-profile a100 \
  --shape 2048x2048x2048
"$kerntune" cache export --force --db "$db" "$here/predicted_tuning.csv"
