// `kerntune fleet verify`: a bundle's integrity, its content hash against its provenance, and a
// stored, checked cubin for every winner (loaded by the driver on a GPU), a sample of the winners
// measured on this GPU timed again; exit 1 on any failure.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "fleet/bundle_verify.hpp"
#include "tools/fleet_commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct VerifyOptions {
  std::string bundle;
  fleet::RemeasureOptions remeasure;
  bool json = false;
};

// `fleet verify --json`: {"bundle", "ok", "role", "content_sha256", "winners", "cubins_checked",
// "cubins_loaded", "gpu" (null without one), "remeasured": [{"problem", "config", "stored_us",
// "measured_us", "ok"}], "failures": [line], "notes": [line]}.
void verify(const VerifyOptions& o) {
  const fleet::VerifyReport r = fleet::verify_bundle(o.bundle, o.remeasure);
  if (o.json) {
    std::vector<std::string> failures, notes, remeasured;
    for (const fleet::Remeasured& m : r.remeasured)
      remeasured.push_back(fmt::format(
          "{{\"problem\": {}, \"config\": {}, \"stored_us\": {:.3f}, \"measured_us\": {:.3f}, "
          "\"ok\": {}}}",
          json_string(m.problem_key), json_string(m.config_key), m.stored_us, m.measured_us,
          m.failure.empty() ? "true" : "false"));
    for (const std::string& f : r.failures) failures.push_back(json_string(f));
    for (const std::string& n : r.notes) notes.push_back(json_string(n));
    fmt::print(
        "{{\"bundle\": {}, \"ok\": {}, \"role\": {}, \"content_sha256\": {}, \"winners\": {}, "
        "\"cubins_checked\": {}, \"cubins_loaded\": {}, \"gpu\": {}, \"remeasured\": [{}], "
        "\"failures\": [{}], \"notes\": [{}]}}\n",
        json_string(r.path), r.ok() ? "true" : "false", json_string(r.role),
        json_string(r.content_sha256), r.num_winners, r.num_cubins_checked, r.num_cubins_loaded,
        r.gpu.empty() ? "null" : json_string(r.gpu), fmt::join(remeasured, ", "),
        fmt::join(failures, ", "), fmt::join(notes, ", "));
  } else {
    for (const fleet::Remeasured& m : r.remeasured)
      if (m.measured_us > 0)
        fmt::print("[time] {} {}: {:.2f} us stored, {:.2f} us now ({:+.1f}%)\n", m.problem_key,
                   m.config_key, m.stored_us, m.measured_us,
                   100 * (m.measured_us / m.stored_us - 1));
    for (const std::string& f : r.failures) fmt::print("[FAIL] {}\n", f);
    for (const std::string& n : r.notes) fmt::print("[note] {}\n", n);
    fmt::print("{}: {}: {} winners, {} cubins checked, {} loaded{}; content sha256 {}\n", r.path,
               r.ok() ? "OK" : fmt::format("{} failures", r.failures.size()), r.num_winners,
               r.num_cubins_checked, r.num_cubins_loaded,
               r.gpu.empty() ? "" : fmt::format(" on {}", r.gpu), r.content_sha256);
  }
  if (!r.ok()) throw CLI::RuntimeError(1);
}

}  // namespace

void register_fleet_verify(CLI::App& fleet) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* cmd = fleet.add_subcommand(
      "verify",
      "Check a bundle: integrity, content hash, every winner's cubin (loaded on a GPU), a sample "
      "of the winners measured on this GPU timed again; exit 1 on any failure");
  cmd->add_option("bundle", o->bundle, "The bundle (or any kerntune database)")->required();
  cmd->add_option("--remeasure", o->remeasure.count,
                  "On a GPU: how many of the winners measured on it to time again (0: none)")
      ->default_val(3)
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--tolerance", o->remeasure.tolerance,
                  "A re-timed winner this fraction slower than its stored median fails")
      ->default_val(0.15)
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_flag("--json", o->json,
                "One JSON object: bundle, ok, role, content_sha256, winners, cubins_checked, "
                "cubins_loaded, gpu, remeasured, failures, notes");
  cmd->callback([o] { verify(*o); });
}

}  // namespace kt::cli
