#!/usr/bin/env bash
# Session 14, call 5: the SASS of two shipped sm90 kernels (nvcc -cubin of the generated source,
# no trace marks), to read the TMA-store epilogue's instructions.
OUT=${OUT:-/tmp/kt_out}; mkdir -p "$OUT"
for f in s2048 s1536; do /usr/local/cuda/bin/cuobjdump -sass .carry/s14/cubin/$f.cubin > "$OUT/$f.sass" 2>&1; done
gzip "$OUT"/*.sass; ls -la "$OUT"
