// The sections of `kerntune doctor`: each turns facts from the library into checklist lines
// with a fix. Nothing here writes anything.
#include "tools/doctor_checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "cache/database.hpp"
#include "cache/health.hpp"
#include "cache/row_checks.hpp"
#include "core/env.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "generator/nvrtc_library.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"

namespace kt::cli {

namespace {

// "gemm 15, attention 4, rmsnorm 2": every registered op's current template version.
std::string current_template_versions() {
  std::vector<std::string> parts;
  for (const OpEntry& op : OpRegistry::instance().all())
    parts.push_back(fmt::format("{} {}", op.spec->name(), op.spec->template_version()));
  return fmt::format("{}", fmt::join(parts, ", "));
}

CheckLine ok(std::string finding) { return {Verdict::kOk, std::move(finding), ""}; }
CheckLine warn(std::string finding, std::string fix) {
  return {Verdict::kWarn, std::move(finding), std::move(fix)};
}
CheckLine fail(std::string finding, std::string fix) {
  return {Verdict::kFail, std::move(finding), std::move(fix)};
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// Text read from a database, joined for one line of the checklist, control characters escaped.
std::string printable_join(const std::vector<std::string>& texts, const char* separator) {
  std::string joined;
  for (const std::string& text : texts) {
    if (!joined.empty()) joined += separator;
    joined += cache::printable(text);
  }
  return joined;
}

void add_stale_lines(const cache::DatabaseHealth& h, const std::string& path,
                     const MachineFacts& machine, std::vector<CheckLine>& lines) {
  const cache::StaleRows& s = h.stale;
  if (s.old_version_winners + s.old_version_measurements > 0) {
    lines.push_back(warn(
        fmt::format("{} winners and {} measurements are of an older benchmark protocol or "
                    "template version (current: protocol {}, templates {}): dispatch never uses "
                    "them",
                    s.old_version_winners, s.old_version_measurements, kBenchmarkProtocolVersion,
                    current_template_versions()),
        fmt::format("re-tune those shapes (`kerntune tune --db {} --shape ...`); the old rows "
                    "can stay as history",
                    quoted(path))));
  } else {
    lines.push_back(
        ok("every winner and measurement is of the current protocol and template "
           "versions"));
  }
  if (machine.gpu) {
    if (s.other_device_winners + s.other_device_measurements > 0) {
      lines.push_back(warn(
          fmt::format("{} winners and {} measurements are of other devices ({}), not of this "
                      "machine's ({}): dispatch here falls back to the model for them",
                      s.other_device_winners, s.other_device_measurements,
                      printable_join(s.other_devices, "; "),
                      fmt::join(machine.device_fingerprints, "; ")),
          fmt::format("tune on this machine (`kerntune tune --db {} ...`), or merge a database "
                      "tuned on this GPU model (`kerntune cache merge OTHER.db --db {}`)",
                      quoted(path), quoted(path))));
    } else {
      lines.push_back(ok("every winner and measurement is of a device of this machine"));
    }
  }
  if (!machine.nvrtc_version.empty()) {
    if (s.other_nvrtc_cubins > 0) {
      lines.push_back(warn(
          fmt::format("{} cubins were compiled by another NVRTC ({}; loaded: {}) and stored "
                      "without a source key (by a kerntune before schema 4): their compile keys "
                      "never match now, so they only take space",
                      s.other_nvrtc_cubins, printable_join(s.other_nvrtc_versions, ", "),
                      machine.nvrtc_version),
          "nothing breaks (kernels are recompiled on first use); to reclaim the space, export "
          "the results (`kerntune cache export FILE.csv`), start a new database and import them"));
    } else {
      lines.push_back(
          ok(fmt::format("every cubin was compiled by the loaded NVRTC ({}) or is found by its "
                         "source key",
                         machine.nvrtc_version)));
    }
  }
}

}  // namespace

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "OK";
    case Verdict::kWarn:
      return "WARN";
    case Verdict::kFail:
      return "FAIL";
  }
  return "?";
}

MachineFacts gather_machine_facts() {
  MachineFacts facts;
  try {
    const gen::NvrtcLibrary& nvrtc = gen::nvrtc();
    facts.nvrtc_version = nvrtc.version_string;
    facts.nvrtc_path = nvrtc.path;
  } catch (const Error& error) {
    facts.nvrtc_error = error.what();
  }
  facts.gpu = rt::gpu_available(&facts.no_gpu_reason);
  if (!facts.gpu) return facts;
  try {
    const rt::CudaDriver& driver = rt::driver();
    facts.driver_path = driver.path;
    driver.driver_get_version(&facts.driver_version);
    int count = 0;
    rt::check(driver.device_get_count(&count), "cuDeviceGetCount");
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      CUdevice device = 0;
      rt::check(driver.device_get(&device, ordinal), "cuDeviceGet");
      facts.device_fingerprints.push_back(rt::query_device(device).fingerprint());
    }
  } catch (const Error& error) {
    facts.gpu = false;
    facts.no_gpu_reason = error.what();
  }
  return facts;
}

Section check_database(const std::string& path, const MachineFacts& machine) {
  Section section{"database", fmt::format("database {}", path), {}};
  cache::HealthExpectations expected;
  expected.protocol_version = kBenchmarkProtocolVersion;
  for (const OpEntry& op : OpRegistry::instance().all())
    expected.template_versions.emplace_back(op.spec->key_prefix(), op.spec->template_version());
  expected.device_fingerprints = machine.device_fingerprints;
  expected.nvrtc_version = machine.nvrtc_version;
  const cache::DatabaseHealth h = cache::check_database_health(path, expected);
  auto& lines = section.lines;
  if (!h.exists) {
    lines.push_back(warn("no database file here yet",
                         "nothing to do: `kerntune tune`, `kerntune cache import` or a runtime "
                         "that may write creates it; pass --db PATH if you meant another file"));
    return section;
  }
  if (!h.integrity_problems.empty()) {
    lines.push_back(
        fail(fmt::format("PRAGMA integrity_check: {}", fmt::join(h.integrity_problems, "; ")),
             fmt::format("the file is damaged: move it aside (`mv {0} {0}.bad`) and let kerntune "
                         "start a new one; import results exported earlier (`kerntune cache import "
                         "BACKUP.csv --db {0}`) or re-tune",
                         quoted(path))));
    return section;
  }
  if (!h.problem.empty()) {
    lines.push_back(fail(h.problem, "as the message says; kerntune itself never repairs a file"));
    return section;
  }
  lines.push_back(ok("PRAGMA integrity_check: ok"));
  lines.push_back(ok(fmt::format("a kerntune database (application id {:#x}), opened read-only",
                                 h.application_id)));
  if (h.schema_version < cache::kSchemaVersion) {
    lines.push_back(
        warn(fmt::format("schema version {}, older than this kerntune's {}", h.schema_version,
                         cache::kSchemaVersion),
             fmt::format("upgrade it with `kerntune cache migrate --db {}` (commands that only "
                         "read leave it as it is, and a read-only runtime refuses it until then)",
                         quoted(path))));
  } else {
    lines.push_back(ok(fmt::format("schema version {} (this kerntune reads up to {})",
                                   h.schema_version, cache::kSchemaVersion)));
  }
  lines.push_back(ok(fmt::format("{} cubins ({:.1f} MiB), {} measurements, {} winners",
                                 h.summary.num_cubins, double(h.summary.cubin_bytes) / (1 << 20),
                                 h.summary.num_measurements, h.summary.num_winners)));
  const cache::InvalidRows& bad = h.invalid;
  if (bad.num_cubins > 0) {
    lines.push_back(
        fail(fmt::format("{} cubins fail their check (SHA-256 of the bytes, ELF structure, kernel "
                         "names): damaged or tampered; the runtime never loads them ({})",
                         bad.num_cubins, fmt::join(bad.examples, "; ")),
             fmt::format("nothing to do where NVRTC is installed (they are compiled again on first "
                         "use); else replace the file with a good copy, or export the results "
                         "(`kerntune cache export FILE.csv --db {}`) into a new database",
                         quoted(path))));
  }
  if (bad.num_measurements + bad.num_winners > 0) {
    lines.push_back(warn(
        fmt::format("{} measurements and {} winners are invalid (keys or configs that do not "
                    "parse, times not finite and positive, unknown statuses); dispatch and "
                    "export skip them ({})",
                    bad.num_measurements, bad.num_winners, fmt::join(bad.examples, "; ")),
        fmt::format("export the valid rows (`kerntune cache export FILE.csv --db {}`) and import "
                    "them into a new database",
                    quoted(path))));
  }
  if (bad.num_cubins + bad.num_measurements + bad.num_winners == 0)
    lines.push_back(ok("every cubin, measurement and winner passes its check"));
  add_stale_lines(h, path, machine, lines);
  return section;
}

Section check_blocklist(const std::string& path, const MachineFacts& machine) {
  Section section{"blocklist", "blocklist", {}};
  std::vector<cache::BlocklistEntry> entries;
  try {
    entries = cache::Database::open_readonly(path).blocklist();
  } catch (const Error&) {
    // Absent, damaged or of an older schema: the database section says which and what to do.
    section.title = "blocklist (not read: see the database section)";
    return section;
  }
  const std::string clear = fmt::format("kerntune cache blocklist --clear --db {}", quoted(path));
  if (entries.empty()) {
    section.lines.push_back(ok("no blocklisted kernels"));
    return section;
  }
  // Stale: the compile key holds the NVRTC version and every template, so an entry of another
  // NVRTC or template version can never match a kernel compiled here again.
  std::int64_t here = 0, stale = 0, host = 0;
  std::set<std::string> stale_versions, other_devices;
  for (const cache::BlocklistEntry& e : entries) {
    if (!cache::is_device_fault(e)) {  // older builds blocklisted failures of the host too
      ++host;
      continue;
    }
    const OpEntry* op = OpRegistry::instance().find_by_name(e.op);
    const bool other_nvrtc =
        !machine.nvrtc_version.empty() && e.nvrtc_version != machine.nvrtc_version;
    if (other_nvrtc || op == nullptr || e.template_version != op->spec->template_version()) {
      ++stale;
      stale_versions.insert(fmt::format("NVRTC {} {} template {}",
                                        cache::printable(e.nvrtc_version), cache::printable(e.op),
                                        e.template_version));
    } else if (machine.device_fingerprints.empty() ||
               std::count(machine.device_fingerprints.begin(), machine.device_fingerprints.end(),
                          e.device_fingerprint) > 0) {
      ++here;
    } else {
      other_devices.insert(cache::printable(e.device_fingerprint));
    }
  }
  section.lines.push_back(ok(fmt::format(
      "{} kernels blocklisted for {} and NVRTC {}: `kerntune tune` skips them (--retry-blocklisted "
      "tries them); `kerntune cache blocklist` lists them, `{}` empties the list",
      here, machine.gpu ? "this machine's GPUs" : "any device (no GPU here to tell)",
      machine.nvrtc_version.empty() ? "(not loaded)" : machine.nvrtc_version, clear)));
  const std::int64_t other = std::int64_t(entries.size()) - here - stale - host;
  if (other > 0)
    section.lines.push_back(ok(fmt::format(
        "{} entries are of other devices ({}): they apply where this database serves those GPUs",
        other, fmt::join(other_devices, "; "))));
  if (host > 0)
    section.lines.push_back(warn(
        fmt::format("{} entries record failures of the host, not of a kernel on the device (a "
                    "compile worker that died or ran out of time; older builds blocklisted them): "
                    "`kerntune tune` ignores them",
                    host),
        fmt::format("nothing breaks; `{}` removes them (and every other entry)", clear)));
  if (stale > 0)
    section.lines.push_back(warn(
        fmt::format("{} entries are stale: recorded under another NVRTC or template version ({}; "
                    "current: NVRTC {}, templates {}), their compile keys can no longer occur",
                    stale, fmt::join(stale_versions, ", "),
                    machine.nvrtc_version.empty() ? "not loaded" : machine.nvrtc_version,
                    current_template_versions()),
        fmt::format("nothing breaks, they only take space; `{}` removes them (and every other "
                    "entry: kernels that still crash are blocklisted again by the next tune)",
                    clear)));
  return section;
}

Section check_toolkit(const MachineFacts& machine) {
  Section section{"toolkit", "toolkit", {}};
  if (machine.nvrtc_version.empty()) {
    section.lines.push_back(fail(
        fmt::format("NVRTC cannot be loaded: {}", machine.nvrtc_error),
        "install the CUDA toolkit (13.x), or point KERNTUNE_NVRTC at libnvrtc.so or CUDA_HOME at "
        "the toolkit; without NVRTC nothing can be compiled and no compile key computed"));
  } else {
    section.lines.push_back(
        ok(fmt::format("NVRTC {} ({})", machine.nvrtc_version, machine.nvrtc_path)));
  }
  const std::filesystem::path include = std::filesystem::path(env::cuda_home()) / "include";
  std::error_code error;
  if (std::filesystem::exists(include / "cuda.h", error)) {
    section.lines.push_back(ok(fmt::format("CUDA headers: {}", include.string())));
  } else {
    section.lines.push_back(
        warn(fmt::format("no CUDA headers at {}", include.string()),
             "only building kerntune needs them (kernels compile from embedded templates); set "
             "CUDA_HOME to the toolkit to build"));
  }
  return section;
}

Section check_driver(const MachineFacts& machine) {
  Section section{"driver", "driver", {}};
  if (!machine.gpu) {
    section.lines.push_back(warn(
        fmt::format("no usable GPU: {}", machine.no_gpu_reason),
        "`kerntune tune` predicts with a device profile here; measuring, `bench` and the runtime "
        "need the NVIDIA driver (libcuda.so.1; KERNTUNE_CUDA_DRIVER names another path) and a "
        "GPU"));
    return section;
  }
  section.lines.push_back(
      ok(fmt::format("libcuda {}: CUDA driver {}.{}", machine.driver_path,
                     machine.driver_version / 1000, machine.driver_version % 1000 / 10)));
  for (std::size_t i = 0; i < machine.device_fingerprints.size(); ++i)
    section.lines.push_back(ok(fmt::format("device {}: {}", i, machine.device_fingerprints[i])));
  return section;
}

}  // namespace kt::cli
