// `kerntune info`: the device, the toolkit, the driver, the fingerprint and the database.
#include <fmt/format.h>

#include "core/error.hpp"
#include "generator/nvrtc_library.hpp"
#include "kerntune/kerntune.h"
#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace kt::cli {

namespace {

struct InfoOptions {
  std::string db;
  int device = 0;
};

void print_device(const DeviceDesc& d) {
  fmt::print("device:      {} (compute capability {}.{}, arch {})\n", d.name, d.cc_major,
             d.cc_minor, d.arch());
  fmt::print("             {} SMs, {} MHz, {:.0f} GiB, L2 {} MiB, smem/block {} KiB\n", d.num_sms,
             d.sm_clock_mhz, double(d.memory_bytes) / (1 << 30), d.l2_bytes >> 20,
             d.max_smem_per_block_optin_bytes / 1024);
  fmt::print("fingerprint: {}\n", d.fingerprint());
}

void run(const InfoOptions& o) {
  fmt::print("kerntune {}\n", kt_version());
  try {
    const auto& nvrtc = gen::nvrtc();
    fmt::print("NVRTC:       {} ({})\n", nvrtc.version_string, nvrtc.path);
  } catch (const Error& e) {
    fmt::print("NVRTC:       not available: {}\n", e.what());
  }
  std::string reason;
  if (rt::gpu_available(&reason)) {
    int version = 0;
    rt::driver().driver_get_version(&version);
    fmt::print("driver:      CUDA {}.{} ({})\n", version / 1000, version % 1000 / 10,
               rt::driver().path);
    rt::BoundContext context(o.device);
    print_device(rt::query_device(context.device()));
  } else {
    fmt::print("driver:      no GPU: {}\n", reason);
    fmt::print("             `kerntune tune` predicts with a device profile ({}) instead\n",
               fmt::join(device_profile_names(), ", "));
  }
  const std::string path = resolve_database_path(o.db);
  try {
    const cache::Summary s = cache::Database::open(path).summary();
    fmt::print("database:    {} (schema {}: {} cubins, {:.1f} MiB; {} measurements; {} winners)\n",
               path, s.schema_version, s.num_cubins, double(s.cubin_bytes) / (1 << 20),
               s.num_measurements, s.num_winners);
  } catch (const Error& e) {
    fmt::print("database:    {}: {}\n", path, e.what());
  }
}

}  // namespace

void register_info(CLI::App& app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* cmd =
      app.add_subcommand("info", "Show the GPU, toolkit, driver, fingerprint and database");
  add_database_option(*cmd, options->db);
  cmd->add_option("--device", options->device, "CUDA device ordinal")->capture_default_str();
  cmd->callback([options] { run(*options); });
}

}  // namespace kt::cli
