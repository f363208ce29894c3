// `kerntune report --json` (report_json.hpp), composed from json_text's strings and numbers.
#include "tools/report_json.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kerntune/kerntune.h"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

const char* json_bool(bool value) { return value ? "true" : "false"; }

// A time that is known when positive.
std::string json_time(double us) { return us > 0 ? json_number(us) : "null"; }

std::string strings_json(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values) quoted.push_back(json_string(v));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

std::string model_json(const std::optional<DeviceDesc>& d) {
  if (!d) return "null";
  return fmt::format(
      "{{\"num_sms\": {}, \"sm_clock_mhz\": {}, \"dram_gbps\": {}, \"mma_sync_tflops\": {}, "
      "\"wgmma_tflops\": {}, \"tensor_tflops\": {}}}",
      d->num_sms, d->sm_clock_mhz, json_number(d->dram_gbps), json_number(d->mma_sync_tflops),
      json_number(d->wgmma_tflops), json_number(std::max(d->mma_sync_tflops, d->wgmma_tflops)));
}

std::string waves_json(const std::optional<WaveStats>& w) {
  if (!w) return "null";
  return fmt::format(
      "{{\"num_ctas\": {}, \"slots\": {}, \"waves\": {}, \"last_wave_ctas\": {}, "
      "\"last_wave_occupancy\": {}, \"efficiency\": {}}}",
      w->num_ctas, w->slots, w->waves, w->last_wave_ctas,
      json_number(w->slots > 0 ? double(w->last_wave_ctas) / double(w->slots) : 0),
      json_number(w->efficiency));
}

std::string pick_json(const ReportProblem& p, const std::optional<ReportPick>& pick) {
  if (!pick) return "null";
  return fmt::format(
      "{{\"config\": {}, \"us\": {}, \"predicted\": {}, \"tflops\": {}, \"waves\": {}}}",
      json_string(pick->config_key), json_time(pick->us), json_bool(pick->predicted),
      pick->us > 0 ? json_number(p.summary.flops / pick->us / 1e6) : "null",
      waves_json(pick->waves));
}

std::string config_json(const ReportConfig& c) {
  return fmt::format(
      "{{\"config\": {}, \"predicted\": {}, \"us\": {}, \"predicted_us\": {}, \"spread_pct\": {}, "
      "\"finalist\": {}, \"tile\": {}}}",
      json_string(c.config_key), json_bool(c.predicted), json_number(c.us),
      json_time(c.predicted_us), c.predicted ? "null" : json_number(c.spread_pct),
      json_bool(c.finalist), c.tile ? fmt::format("[{}, {}]", c.tile->x, c.tile->y) : "null");
}

std::string bench_json(const BenchCsvRow& b) {
  return fmt::format(
      "{{\"line\": {}, \"config\": {}, \"grade\": {}, \"kerntune_us\": {}, \"baseline\": {}, "
      "\"baseline_us\": {}, \"ratio\": {}}}",
      b.line, json_string(b.config_key), json_string(b.grade), json_number(b.kerntune_us),
      json_string(b.baseline), json_time(b.baseline_us), json_time(b.ratio()));
}

std::string problem_json(const ReportProblem& p) {
  std::vector<std::string> configs, failures, bench;
  for (const ReportConfig& c : p.configs) configs.push_back(config_json(c));
  for (const auto& [status, n] : p.failures)
    failures.push_back(fmt::format("{}: {}", json_string(status), n));
  for (const BenchCsvRow& b : p.bench) bench.push_back(bench_json(b));
  return fmt::format(
      "{{\"problem\": {}, \"op\": {}, \"device\": {}, \"protocol_version\": {}, "
      "\"template_version\": {}, \"current_versions\": {}, \"flops\": {}, \"min_bytes\": {}, "
      "\"flop_per_byte\": {}, \"memory_bound\": {}, \"tile_axes\": {}, \"winner\": {}, "
      "\"runner_up\": {}, \"configs\": [{}], \"failures\": {{{}}}, \"bench\": [{}]}}",
      json_string(p.key.problem_key), json_string(p.op), json_string(p.key.device_fingerprint),
      p.key.protocol_version, p.key.template_version, json_bool(p.current_versions),
      json_number(p.summary.flops), json_number(p.summary.min_bytes),
      json_number(p.summary.min_bytes > 0 ? p.summary.flops / p.summary.min_bytes : 0),
      json_bool(p.summary.memory_bound),
      p.tile_axes ? strings_json({p.tile_axes->first, p.tile_axes->second}) : "null",
      pick_json(p, p.winner), pick_json(p, p.runner_up), fmt::join(configs, ", "),
      fmt::join(failures, ", "), fmt::join(bench, ", "));
}

}  // namespace

std::string report_json(const ReportData& data) {
  bool measured = false;
  std::vector<std::string> devices, problems;
  for (const ReportDevice& d : data.devices)
    devices.push_back(fmt::format("{{\"fingerprint\": {}, \"model\": {}}}",
                                  json_string(d.fingerprint), model_json(d.model)));
  for (const ReportProblem& p : data.problems) {
    problems.push_back(problem_json(p));
    measured = measured || (p.winner && !p.winner->predicted) ||
               std::any_of(p.configs.begin(), p.configs.end(),
                           [](const ReportConfig& c) { return !c.predicted; });
  }
  return fmt::format(
      "{{\"kerntune_version\": {}, \"database\": {}, \"schema_version\": {}, \"bench_file\": {}, "
      "\"predicted_only\": {}, \"devices\": [{}], \"problems\": [{}], \"notes\": {}}}",
      json_string(kt_version()), json_string(data.database), data.schema_version,
      data.bench_file.empty() ? "null" : json_string(data.bench_file), json_bool(!measured),
      fmt::join(devices, ", "), fmt::join(problems, ", "), strings_json(data.notes));
}

}  // namespace kt::cli
