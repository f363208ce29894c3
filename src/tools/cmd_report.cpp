// `kerntune report`: one self-contained HTML page of what a tuning database holds, plotted with
// matplotlib (python/kerntune/report.py): per problem the ratio against the baseline library
// (from a `kerntune bench --csv` file), the configs as a heatmap over the tile, the model against
// the measurements, the winner's and runner-up's waves; per device a roofline with every winner.
// This file gathers the data (report_data.hpp) and hands it, as JSON, to the renderer; --json
// prints that JSON instead. Reads the database only: never creates or migrates it.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "tools/bench_csv.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/report_data.hpp"
#include "tools/report_json.hpp"
#include "tools/report_renderer.hpp"

namespace kt::cli {

namespace {

struct ReportOptions {
  std::string db;
  ReportFilter filter;
  std::string bench;
  std::string out;
  bool json = false;
};

void run(const ReportOptions& o) {
  if (!o.json && o.out.empty())
    throw_invalid("pass --out FILE.html for the page, or --json for its data on stdout");
  const std::vector<BenchCsvRow> bench =
      o.bench.empty() ? std::vector<BenchCsvRow>{} : read_bench_csv(o.bench);
  const cache::Database db = required_existing_database(o.db, "report");
  const ReportData data = gather_report(db, o.filter, bench, o.bench);
  for (const std::string& note : data.notes) fmt::print(stderr, "kerntune report: {}\n", note);
  const std::string json = report_json(data);
  if (o.json) {
    fmt::print("{}\n", json);
    return;
  }
  render_report(json, o.out);
  const auto counted = [](std::size_t n, const char* noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
  };
  fmt::print("wrote {} ({} on {})\n", o.out, counted(data.problems.size(), "problem"),
             counted(data.devices.size(), "device"));
}

}  // namespace

void register_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "One HTML page of a database's tuning results, plotted (python3 + matplotlib)");
  add_database_option(*cmd, o->db);
  cmd->add_option("--op", o->filter.ops,
                  fmt::format("Only this op's problems (repeatable): {}",
                              fmt::join(OpRegistry::instance().names(), ", ")));
  cmd->add_option("--device", o->filter.device,
                  "Only this device's rows, by fingerprint as stored (`kerntune cache ls`)");
  cmd->add_option("--bench", o->bench,
                  "A CSV `kerntune bench --csv` wrote on the report's device: the ratio against "
                  "the baseline library per problem");
  cmd->add_option("--out", o->out, "The HTML file to write (self-contained: images embedded)");
  cmd->add_flag("--json", o->json,
                "Print the page's data as one JSON object instead of rendering it: database, "
                "devices [{fingerprint, model}], problems [{problem, op, device, flops, "
                "min_bytes, winner, runner_up, configs, failures, bench, ...}], notes");
  cmd->footer(
      "Examples:\n"
      "  kerntune report --db kerntune.db --out report.html\n"
      "  kerntune bench --suite foundation --csv bench.csv\n"
      "  kerntune report --op gemm --bench bench.csv --out gemm.html\n"
      "Predicted rows (tuned without a GPU) are marked as the model's times, not measurements.\n"
      "Rendering runs `python3 -m kerntune.report` (KERNTUNE_PYTHON picks the interpreter).");
  cmd->callback([o] { run(*o); });
}

}  // namespace kt::cli
