// Bundle verification (bundle_verify.hpp).
#include "fleet/bundle_verify.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "cache/database.hpp"
#include "cache/health.hpp"
#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "fleet/provenance.hpp"
#include "fleet/work_plan.hpp"
#include "generator/generated_source.hpp"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "runtime/module_cache.hpp"

namespace kt::fleet {

using cache::printable;

VerifyReport verify_bundle(const std::string& path, const RemeasureOptions& remeasure) {
  VerifyReport r;
  r.path = path;
  const cache::Database db = cache::Database::open_readonly(path);  // throws for a bad file

  // 1. The file.
  const cache::DatabaseHealth health = cache::check_database_health(path, {});
  for (const std::string& problem : health.integrity_problems)
    r.failures.push_back("integrity check: " + printable(problem));
  if (health.invalid.num_cubins + health.invalid.num_measurements + health.invalid.num_winners > 0)
    r.failures.push_back(fmt::format(
        "{} cubins, {} measurements and {} winners fail their checks (first: {})",
        health.invalid.num_cubins, health.invalid.num_measurements, health.invalid.num_winners,
        health.invalid.examples.empty() ? "?" : printable(health.invalid.examples.front())));

  // 2. Its provenance and content hash.
  const Provenance provenance = read_provenance(db);
  r.role = provenance.role;
  r.content_sha256 = db.content_sha256();
  if (provenance.role.empty())
    r.notes.push_back("no provenance: not written by `kerntune fleet merge` or `fleet run`");
  else if (provenance.content_sha256.empty())
    r.failures.push_back("the provenance records no content hash");
  else if (provenance.content_sha256 != r.content_sha256)
    r.failures.push_back(fmt::format(
        "content hash {} is not the one recorded when it was written ({}): rows were changed "
        "since",
        r.content_sha256, printable(provenance.content_sha256)));

  // 3. Every winner served: versions, config, a cubin of every variant by source key.
  std::optional<DeviceDesc> gpu;
  std::optional<rt::BoundContext> context;
  std::string no_gpu;
  if (rt::gpu_available(&no_gpu)) {
    context.emplace(0);
    gpu = rt::query_device(context->device());
    r.gpu = gpu->fingerprint();
  } else {
    r.notes.push_back("no GPU (" + no_gpu + "): cubins were checked, not loaded");
  }
  rt::ModuleCache modules;
  std::map<std::string, std::string> no_profile;  // fingerprint -> note
  for (const cache::Winner& w : db.all_winners()) {
    ++r.num_winners;
    const std::string where =
        fmt::format("{} on {}", printable(w.key.problem_key), printable(w.key.device_fingerprint));
    const OpEntry* entry = OpRegistry::instance().find_by_key(w.key.problem_key);
    if (entry == nullptr) {
      r.failures.push_back(where + ": no op of this kerntune has this problem key");
      continue;
    }
    const OpSpec& op = *entry->spec;
    if (w.key.protocol_version != kBenchmarkProtocolVersion ||
        w.key.template_version != op.template_version()) {
      r.failures.push_back(
          fmt::format("{}: protocol {} template {}, this kerntune serves protocol {} template {}",
                      where, w.key.protocol_version, w.key.template_version,
                      kBenchmarkProtocolVersion, op.template_version()));
      continue;
    }
    const std::optional<DeviceDesc> device = device_of_fingerprint(w.key.device_fingerprint);
    if (!device) {
      no_profile.emplace(w.key.device_fingerprint,
                         fmt::format("{}: no built-in profile of its compute capability, so its "
                                     "winners' configs and cubins were not checked",
                                     printable(w.key.device_fingerprint)));
      continue;
    }
    if (auto why = op.validate_config(w.key.problem_key, w.config_key, *device)) {
      r.failures.push_back(fmt::format("{}: winner {} is not valid there: {}", where,
                                       printable(w.config_key), *why));
      continue;
    }
    for (const std::string& variant : op.variants()) {
      const gen::GeneratedSource source =
          gen::generate(op, w.key.problem_key, w.config_key, variant, device->arch());
      const std::string label =
          fmt::format("{}: {}{}", where, w.config_key, variant.empty() ? "" : " (" + variant + ")");
      const std::vector<cache::CubinRecord> cubins =
          db.find_cubins_by_source(gen::source_key(source), source.arch);
      if (cubins.empty()) {
        r.failures.push_back(label + ": no cubin stored (a machine without NVRTC cannot serve it)");
        continue;
      }
      const std::string problem = rt::stored_cubin_problem(cubins.front(), source);
      if (!problem.empty()) {
        r.failures.push_back(label + ": its cubin fails its check: " + problem);
        continue;
      }
      ++r.num_cubins_checked;
      if (!gpu || gpu->arch() != source.arch) continue;
      try {
        const rt::ScopedCurrent current(context->context());
        modules.load(cubins.front());
        ++r.num_cubins_loaded;
      } catch (const Error& e) {
        r.failures.push_back(fmt::format("{}: its cubin does not load on {}: {}", label,
                                         gpu->fingerprint(), e.what()));
      }
    }
  }
  for (const auto& [fingerprint, note] : no_profile) r.notes.push_back(note);
  if (gpu && r.num_cubins_loaded == 0 && r.num_winners > 0)
    r.notes.push_back(
        fmt::format("no winner is for this GPU's architecture ({}): none loaded", gpu->arch()));

  // 4. A sample of the winners measured here, timed again.
  if (gpu && remeasure.count > 0) {
    const std::vector<cache::Winner> here = remeasurable_winners(db, *gpu);
    if (here.empty())
      r.notes.push_back("no winner was measured on this GPU (" + gpu->fingerprint() +
                        "): none timed again");
    const rt::ScopedCurrent current(context->context());
    r.remeasured = remeasure_sample(path, here, remeasure);
    for (const Remeasured& m : r.remeasured) {
      const std::string where = fmt::format("{}: {}", printable(m.problem_key), m.config_key);
      if (!m.failure.empty()) r.failures.push_back(where + ": " + m.failure);
      if (!m.skipped.empty()) r.notes.push_back(where + ": " + m.skipped);
    }
  }
  return r;
}

}  // namespace kt::fleet
