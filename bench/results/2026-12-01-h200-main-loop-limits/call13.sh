#!/usr/bin/env bash
# Session 9, call 13: the SASS of the 512^2 pick (128 x 128 s6 e2 sk8, bf16, nt), plain and traced,
# compiled here with nvcc -cubin from the kernel of a6f5ca6 (no disassembler on this machine).
for f in t3 t3_trace; do /usr/local/cuda/bin/cuobjdump -sass .carry/$f.cubin > $OUT/$f.sass 2>&1; done
