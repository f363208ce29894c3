// The JSON document of `kerntune report --json`, which `python3 -m kerntune.report` renders.
#pragma once

#include <string>

#include "tools/report_data.hpp"

namespace kt::cli {

// One JSON object (no newline): {"kerntune_version", "database", "schema_version", "bench_file"
// (null without one), "predicted_only" (no measured time anywhere in the report), "devices":
// [{"fingerprint", "model": {"num_sms", "sm_clock_mhz", "dram_gbps", "mma_sync_tflops",
// "wgmma_tflops", "tensor_tflops" (the faster of the two)} or null}], "problems": [{"problem",
// "op", "device", "protocol_version", "template_version", "current_versions", "flops",
// "min_bytes", "flop_per_byte", "memory_bound", "tile_axes": [x name, y name] or null, "winner"
// and "runner_up": a pick or null, "configs": [{"config", "predicted", "us", "predicted_us"
// (null when unknown), "spread_pct" (null when predicted), "finalist", "tile": [x, y] or null}]
// (fastest first), "failures": {status: count}, "bench": [{"line", "config", "grade",
// "kerntune_us", "baseline", "baseline_us" (null when it did not run), "ratio" (baseline over
// kerntune; null without a baseline)}]}], "notes": [text]}. A pick: {"config", "us",
// "predicted", "tflops", "waves": {"num_ctas", "slots" (the CTAs a wave holds: SMs x CTAs an SM),
// "waves", "last_wave_ctas", "last_wave_occupancy" (last_wave_ctas / slots), "efficiency"} or
// null}.
// Times are in microseconds, rates in TFLOP/s and GB/s.
std::string report_json(const ReportData& data);

}  // namespace kt::cli
