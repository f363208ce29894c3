// `kerntune info`: the device, the toolkit, the driver, the fingerprint and the database (read
// only: never created or migrated).
#include <fmt/format.h>

#include <optional>
#include <string>

#include "core/error.hpp"
#include "generator/nvrtc_library.hpp"
#include "kerntune/kerntune.h"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"
#include "tools/json_text.hpp"

namespace kt::cli {

namespace {

struct InfoOptions {
  std::string db;
  int device = 0;
  bool json = false;
};

// What `info` reports, gathered once and printed as text or JSON.
struct InfoFacts {
  std::string nvrtc_version, nvrtc_path, nvrtc_error;  // version empty: not available
  std::string driver_version, driver_path, no_gpu_reason;
  std::optional<DeviceDesc> device;
  std::string database_path, database_error;
  bool database_exists = false;
  int database_schema_version = 0;  // of a file this kerntune cannot read as it is (0: unknown)
  std::optional<cache::Summary> database;
};

InfoFacts gather(const InfoOptions& o) {
  InfoFacts f;
  try {
    const auto& nvrtc = gen::nvrtc();
    f.nvrtc_version = nvrtc.version_string;
    f.nvrtc_path = nvrtc.path;
  } catch (const Error& e) {
    f.nvrtc_error = e.what();
  }
  if (rt::gpu_available(&f.no_gpu_reason)) {
    int version = 0;
    rt::driver().driver_get_version(&version);
    f.driver_version = fmt::format("{}.{}", version / 1000, version % 1000 / 10);
    f.driver_path = rt::driver().path;
    rt::BoundContext context(o.device);
    f.device = rt::query_device(context.device());
  }
  // Read-only: info never creates a database or migrates an older one; it reports either.
  f.database_path = resolve_database_path(o.db);
  try {
    std::optional<cache::Database> db = open_existing_database(o.db);
    f.database_exists = db.has_value();
    if (db) f.database = db->summary();
  } catch (const Error& e) {
    f.database_exists = true;
    f.database_error = e.what();
    try {
      f.database_schema_version = cache::schema_version_of(f.database_path);
    } catch (const Error&) {
    }
  }
  return f;
}

void print_text(const InfoFacts& f) {
  fmt::print("kerntune {}\n", kt_version());
  if (f.nvrtc_version.empty())
    fmt::print("NVRTC:       not available: {}\n", f.nvrtc_error);
  else
    fmt::print("NVRTC:       {} ({})\n", f.nvrtc_version, f.nvrtc_path);
  if (f.device) {
    const DeviceDesc& d = *f.device;
    fmt::print("driver:      CUDA {} ({})\n", f.driver_version, f.driver_path);
    fmt::print("device:      {} (compute capability {}.{}, arch {})\n", d.name, d.cc_major,
               d.cc_minor, d.arch());
    fmt::print("             {} SMs, {} MHz, {:.0f} GiB, L2 {} MiB, smem/block {} KiB\n", d.num_sms,
               d.sm_clock_mhz, double(d.memory_bytes) / (1 << 30), d.l2_bytes >> 20,
               d.max_smem_per_block_optin_bytes / 1024);
    fmt::print("fingerprint: {}\n", d.fingerprint());
  } else {
    fmt::print("driver:      no GPU: {}\n", f.no_gpu_reason);
    fmt::print("             `kerntune tune` predicts with a device profile ({}) instead\n",
               fmt::join(device_profile_names(), ", "));
  }
  if (const auto& s = f.database)
    fmt::print("database:    {} (schema {}: {} cubins, {:.1f} MiB; {} measurements; {} winners)\n",
               f.database_path, s->schema_version, s->num_cubins,
               double(s->cubin_bytes) / (1 << 20), s->num_measurements, s->num_winners);
  else if (!f.database_exists)
    fmt::print("database:    {}\n", no_database_note(f.database_path));
  else
    fmt::print("database:    {}: {}\n", f.database_path, f.database_error);
}

// `info --json`: {"version", "nvrtc": {"version", "path"} or {"error"}, "driver": {"version",
// "path"} or {"error"}, "device": {"name", "arch", "sms", "sm_clock_mhz", "memory_bytes",
// "fingerprint"} or null, "database": {"path", "exists": true, "schema_version", "cubins",
// "cubin_bytes", "measurements", "winners"}, or {"path", "exists": false} (no file yet), or
// {"path", "exists": true, "schema_version" (null when unknown), "error"} (a file this
// kerntune cannot read as it is: an older schema, damaged, foreign)}.
void print_json(const InfoFacts& f) {
  const std::string nvrtc =
      f.nvrtc_version.empty()
          ? fmt::format("{{\"error\": {}}}", json_string(f.nvrtc_error))
          : fmt::format("{{\"version\": {}, \"path\": {}}}", json_string(f.nvrtc_version),
                        json_string(f.nvrtc_path));
  std::string driver = fmt::format("{{\"error\": {}}}", json_string(f.no_gpu_reason));
  std::string device = "null";
  if (f.device) {
    const DeviceDesc& d = *f.device;
    driver = fmt::format("{{\"version\": {}, \"path\": {}}}", json_string(f.driver_version),
                         json_string(f.driver_path));
    device = fmt::format(
        "{{\"name\": {}, \"arch\": {}, \"sms\": {}, \"sm_clock_mhz\": {}, \"memory_bytes\": {}, "
        "\"fingerprint\": {}}}",
        json_string(d.name), json_string(d.arch()), d.num_sms, d.sm_clock_mhz, d.memory_bytes,
        json_string(d.fingerprint()));
  }
  std::string database = fmt::format(
      "{{\"path\": {}, \"exists\": true, \"schema_version\": {}, \"error\": {}}}",
      json_string(f.database_path),
      f.database_schema_version > 0 ? std::to_string(f.database_schema_version) : "null",
      json_string(f.database_error));
  if (!f.database_exists)
    database = fmt::format("{{\"path\": {}, \"exists\": false}}", json_string(f.database_path));
  if (const auto& s = f.database)
    database = fmt::format(
        "{{\"path\": {}, \"exists\": true, \"schema_version\": {}, \"cubins\": {}, "
        "\"cubin_bytes\": {}, \"measurements\": {}, \"winners\": {}}}",
        json_string(f.database_path), s->schema_version, s->num_cubins, s->cubin_bytes,
        s->num_measurements, s->num_winners);
  fmt::print(
      "{{\"version\": {}, \"nvrtc\": {}, \"driver\": {}, \"device\": {}, \"database\": {}}}\n",
      json_string(kt_version()), nvrtc, driver, device, database);
}

}  // namespace

void register_info(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd =
      app.add_subcommand("info", "Show the GPU, toolkit, driver, fingerprint and database");
  add_database_option(*cmd, options->db);
  cmd->add_option("--device", options->device, "CUDA device ordinal")->capture_default_str();
  cmd->add_flag("--json", options->json,
                "One JSON object: version, nvrtc, driver, device (null without a GPU), database");
  cmd->callback([options] {
    const InfoFacts facts = gather(*options);
    if (options->json)
      print_json(facts);
    else
      print_text(facts);
  });
}

}  // namespace kt::cli
