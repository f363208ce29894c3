// Cubins from the database, else from NVRTC.
#include "runtime/cubin_provider.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/log.hpp"

namespace kt::rt {

cache::CubinRecord to_record(const gen::CompiledKernel& compiled) {
  cache::CubinRecord r;
  r.compile_key = compiled.compile_key;
  r.arch = compiled.arch;
  r.source_name = compiled.source_name;
  r.name_expressions = compiled.name_expressions;
  r.lowered_names = compiled.lowered_names;
  r.cubin = compiled.cubin;
  r.registers = compiled.resources(0).registers;
  r.spill_bytes = compiled.report.total_spill_bytes();
  r.smem_static_bytes = compiled.resources(0).smem_static_bytes;
  r.log = compiled.log;
  r.nvrtc_version = compiled.nvrtc_version;
  r.compile_ms = compiled.compile_ms;
  return r;
}

CubinResult get_or_compile(cache::Database* db, const gen::GeneratedSource& source,
                           bool allow_compile, bool write_back) {
  const std::string key = gen::compile_key(source);
  if (db != nullptr) {
    if (auto found = db->find_cubin(key)) {
      logger().debug("cubin hit {} key={}", source.name, key.substr(0, 12));
      return {std::move(*found), false};
    }
  }
  if (!allow_compile)
    throw Error(ErrorKind::kNotFound,
                fmt::format("no cubin for {} in the database and compiling is disabled; run "
                            "`kerntune tune` for this shape or allow compilation",
                            source.name));
  CubinResult result{to_record(gen::compile(source)), true};
  if (db != nullptr && write_back) db->put_cubin(result.record);
  return result;
}

}  // namespace kt::rt
