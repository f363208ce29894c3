// `kerntune fleet diff`: where two bundles' winners differ and by how much (read-only).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/row_checks.hpp"
#include "fleet/bundle_diff.hpp"
#include "tools/fleet_commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

using cache::printable;

struct DiffOptions {
  std::string a;
  std::string b;
  bool exit_code = false;
  bool json = false;
};

std::string winner_json(const std::optional<cache::Winner>& w) {
  if (!w) return "null";
  return fmt::format("{{\"config\": {}, \"us\": {}, \"measured\": {}}}", json_string(w->config_key),
                     json_number(w->median_us), w->predicted ? "false" : "true");
}

std::string optional_number(const std::optional<double>& v) {
  return v ? json_number(*v) : std::string("null");
}

// `fleet diff --json`: {"a", "b", "same", "changes": [{"problem", "device", "a": {config, us,
// measured} | null, "b": ... | null, "ratio" (b's us over a's), "a_us_of_b_config",
// "b_us_of_a_config"}]}.
void diff(const DiffOptions& o) {
  const cache::Database a = cache::Database::open_readonly(o.a);
  const cache::Database b = cache::Database::open_readonly(o.b);
  const fleet::BundleDiff d = fleet::diff_bundles(a, b);
  if (o.json) {
    std::vector<std::string> changes;
    for (const fleet::WinnerChange& c : d.changes)
      changes.push_back(
          fmt::format("{{\"problem\": {}, \"device\": {}, \"a\": {}, \"b\": {}, \"ratio\": {}, "
                      "\"a_us_of_b_config\": {}, \"b_us_of_a_config\": {}}}",
                      json_string(c.key.problem_key), json_string(c.key.device_fingerprint),
                      winner_json(c.a), winner_json(c.b), optional_number(c.ratio()),
                      optional_number(c.a_us_of_b_config), optional_number(c.b_us_of_a_config)));
    fmt::print("{{\"a\": {}, \"b\": {}, \"same\": {}, \"changes\": [{}]}}\n", json_string(o.a),
               json_string(o.b), d.num_same, fmt::join(changes, ", "));
  } else {
    int only_a = 0, only_b = 0;
    for (const fleet::WinnerChange& c : d.changes) {
      const std::string where = fmt::format("{} on {}", printable(c.key.problem_key),
                                            printable(c.key.device_fingerprint));
      auto side = [](const cache::Winner& w) {
        return fmt::format("{} {:.1f} us {}", printable(w.config_key), w.median_us,
                           w.predicted ? "predicted" : "measured");
      };
      if (!c.b) {
        ++only_a;
        fmt::print("only in a: {}: {}\n", where, side(*c.a));
      } else if (!c.a) {
        ++only_b;
        fmt::print("only in b: {}: {}\n", where, side(*c.b));
      } else {
        std::string cross;
        if (c.a_us_of_b_config)
          cross += fmt::format("; a has b's config at {:.1f} us", *c.a_us_of_b_config);
        if (c.b_us_of_a_config)
          cross += fmt::format("; b has a's config at {:.1f} us", *c.b_us_of_a_config);
        fmt::print("differs:   {}: a {} -> b {}{}{}\n", where, side(*c.a), side(*c.b),
                   c.ratio() ? fmt::format(" ({:+.1f}%)", 100 * (*c.ratio() - 1)) : "", cross);
      }
    }
    fmt::print("{} same, {} differ, {} only in a ({}), {} only in b ({})\n", d.num_same,
               int(d.changes.size()) - only_a - only_b, only_a, o.a, only_b, o.b);
  }
  if (o.exit_code && !d.changes.empty()) throw CLI::RuntimeError(1);
}

}  // namespace

void register_fleet_diff(CLI::App& fleet) {
  auto o = std::make_shared<DiffOptions>();
  CLI::App* cmd = fleet.add_subcommand("diff", "Where two bundles' winners differ and by how much");
  cmd->add_option("a", o->a, "The first bundle (the old one)")->required();
  cmd->add_option("b", o->b, "The second bundle (the new one)")->required();
  cmd->add_flag("--exit-code", o->exit_code, "Exit 1 when any winner differs (as git diff)");
  cmd->add_flag("--json", o->json,
                "One JSON object: a, b, same, changes [{problem, device, a, b, ratio, "
                "a_us_of_b_config, b_us_of_a_config}]");
  cmd->callback([o] { diff(*o); });
}

}  // namespace kt::cli
