#!/usr/bin/env bash
# Session 18, call 5: the gpu tier at the session's last commit (the model's tails, stage 9, one
# ceil_div), all but the three long GEMM tests whose kernels are unchanged since 08f4484.
set -uo pipefail
OUT=${OUT:-/tmp/kt_out}; R="$OUT"; mkdir -p "$R"
t0=$(date +%s)
{ date -u; echo "build $(cat dist/COMMIT)"; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv; } > "$R/session.log" 2>&1
F='-GemmCorrectness.Sm90SplitKReducesInTheKernelOnRaggedShapes:GemmCorrectness.Sm90ShippedConfigsOnRaggedShapesBothLayoutsBothDTypes:GemmCorrectness.Sm90ClusterSplitKOnRaggedShapesMatchesTheL2ReductionBitwise'
timeout 560 dist/libexec/kerntune/kt_tests_gpu --gtest_filter="$F" > "$R/gpu_tests_rest.log" 2>&1
echo "gpu tests rc $? at $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED \]|tests ran" "$R/gpu_tests_rest.log" | head -20
gzip "$R/gpu_tests_rest.log"
