// Where cubins come from: the database when present (a warm start never calls NVRTC), else
// NVRTC, with the result written back when the database is writable; and a stored cubin that no
// longer loads is rebuilt from source and replaced.
#pragma once

#include "cache/database.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "runtime/module_cache.hpp"

namespace kt::rt {

cache::CubinRecord to_record(const gen::CompiledKernel& compiled);

struct CubinResult {
  cache::CubinRecord record;
  bool compiled_now = false;
};

// db may be null. allow_compile = false turns a miss into kt::Error (kNotFound).
// write_back = false never writes (read-only runtimes).
CubinResult get_or_compile(cache::Database* db, const gen::GeneratedSource& source,
                           bool allow_compile, bool write_back);

// Loads `cubin` (compiled from `source`) into the current context. A cubin from the database that
// the driver refuses as an image (invalid or damaged, for another architecture, PTX it cannot
// JIT, a kernel name it lacks) is stale: it is compiled again from `source` (when allow_compile),
// its row replaced (when write_back), the warning logged once per compile key, and that one
// loaded; `cubin` becomes the record loaded. Other failures, and a refused fresh compile, throw
// the CudaError.
const LoadedModule& load_or_rebuild(ModuleCache& modules, CubinResult& cubin, cache::Database* db,
                                    const gen::GeneratedSource& source, bool allow_compile,
                                    bool write_back);

}  // namespace kt::rt
