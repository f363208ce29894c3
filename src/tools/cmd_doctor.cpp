// `kerntune doctor`: a checklist of the database, its blocklist, the toolkit and the driver, each
// line OK, WARN or FAIL with what to do; exits 1 when any line is FAIL. Reads only: the database
// is opened read-only and nothing is compiled or written.
#include <fmt/format.h>

#include <functional>

#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/doctor_checks.hpp"

namespace kt::cli {

namespace {

struct DoctorOptions {
  std::string db;
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
say what to do. Exit status: 0 without FAIL lines, 1 with any.

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

void run(const DoctorOptions& o) {
  const std::string path = resolve_database_path(o.db);
  const MachineFacts machine = gather_machine_facts();
  const std::vector<std::function<Section()>> sections = {
      [&] { return check_database(path, machine); },
      [&] { return check_blocklist(path, machine); },
      [&] { return check_toolkit(machine); },
      [&] { return check_driver(machine); },
  };
  int num_warn = 0, num_fail = 0;
  for (const auto& check : sections) {
    const Section section = check();
    print(section);
    for (const CheckLine& line : section.lines) {
      num_warn += line.verdict == Verdict::kWarn;
      num_fail += line.verdict == Verdict::kFail;
    }
  }
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
  cmd->callback([options] { run(*options); });
}

}  // namespace kt::cli
