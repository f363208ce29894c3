// `kerntune doctor`: a checklist of the database, its blocklist, the toolkit and the driver, each
// line OK, WARN or FAIL with what to do; exits 1 when any line is FAIL. Reads only: the database
// is opened read-only and nothing is compiled or written.
#include <fmt/format.h>

#include <functional>

#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/doctor_checks.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct DoctorOptions {
  std::string db;
  bool json = false;
};

constexpr const char* kDescription = R"(Check this machine's kerntune set-up and print a checklist.

database  opened read-only (never created, migrated or written): SQLite's full integrity
          check, the application id and schema version against what this kerntune reads, and
          stale rows: winners and measurements of an older benchmark protocol or template
          version, of a device that is not this machine's (when a GPU is visible), and cubins
          of another NVRTC version.
blocklist kernels that crashed, faulted or hung while tuning: how many apply to this machine's
          GPUs and NVRTC, how many are of other devices, and stale ones (another NVRTC or
          template version: their compile keys can no longer occur), with the command that
          clears the list.
toolkit   NVRTC found and its version; the CUDA headers.
driver    libcuda found, the driver version and every device's fingerprint.

Each line is OK, WARN (works, but see the fix) or FAIL (fix it first), and WARN and FAIL lines
say what to do. Exit status: 0 without FAIL lines, 1 with any. --json prints the same checklist
as one JSON object.

Examples:
  kerntune doctor                         the default database ($KERNTUNE_DB or the cache dir)
  kerntune doctor --db fleet/h200.db      a database shipped with an application)";

void print(const Section& section) {
  fmt::print("{}\n", section.title);
  for (const CheckLine& line : section.lines) {
    fmt::print("  [{}]{} {}\n", to_string(line.verdict),
               std::string(4 - std::string(to_string(line.verdict)).size(), ' '), line.finding);
    if (!line.fix.empty()) fmt::print("         fix: {}\n", line.fix);
  }
}

// `doctor --json`: {"database", "sections": [{"name": "database" | "blocklist" | "toolkit" |
// "driver", "title", "lines": [{"verdict": "OK" | "WARN" | "FAIL", "finding", "fix" (empty for
// OK)}]}], "failures", "warnings"}; the exit status as without --json.
void print_json(const std::string& path, const std::vector<Section>& sections, int num_fail,
                int num_warn) {
  std::vector<std::string> items;
  for (const Section& section : sections) {
    std::vector<std::string> lines;
    for (const CheckLine& line : section.lines)
      lines.push_back(fmt::format("{{\"verdict\": {}, \"finding\": {}, \"fix\": {}}}",
                                  json_string(to_string(line.verdict)), json_string(line.finding),
                                  json_string(line.fix)));
    items.push_back(fmt::format("{{\"name\": {}, \"title\": {}, \"lines\": [{}]}}",
                                json_string(section.name), json_string(section.title),
                                fmt::join(lines, ", ")));
  }
  fmt::print("{{\"database\": {}, \"sections\": [{}], \"failures\": {}, \"warnings\": {}}}\n",
             json_string(path), fmt::join(items, ", "), num_fail, num_warn);
}

void run(const DoctorOptions& o) {
  const std::string path = resolve_database_path(o.db);
  const MachineFacts machine = gather_machine_facts();
  const std::vector<std::function<Section()>> checks = {
      [&] { return check_database(path, machine); },
      [&] { return check_blocklist(path, machine); },
      [&] { return check_toolkit(machine); },
      [&] { return check_driver(machine); },
  };
  std::vector<Section> sections;
  int num_warn = 0, num_fail = 0;
  for (const auto& check : checks) {
    sections.push_back(check());
    if (!o.json) print(sections.back());
    for (const CheckLine& line : sections.back().lines) {
      num_warn += line.verdict == Verdict::kWarn;
      num_fail += line.verdict == Verdict::kFail;
    }
  }
  if (o.json)
    print_json(path, sections, num_fail, num_warn);
  else
    fmt::print("{} FAIL, {} WARN\n", num_fail, num_warn);
  if (num_fail > 0) throw CLI::RuntimeError(1);
}

}  // namespace

void register_doctor(CLI::App& app) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Check the database, blocklist, toolkit and driver; print what to fix (read-only)");
  cmd->description(kDescription);
  add_database_option(*cmd, options->db);
  cmd->add_flag("--json", options->json,
                "One JSON object: database, sections [{name, title, lines [{verdict, finding, "
                "fix}]}], failures, warnings");
  cmd->callback([options] { run(*options); });
}

}  // namespace kt::cli
