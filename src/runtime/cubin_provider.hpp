// Where cubins come from: the database when present (a warm start never calls NVRTC), else
// NVRTC, with the result written back when the database is writable; and a stored cubin that no
// longer loads is rebuilt from source and replaced.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

// The reason a cubin record read from a database may not be loaded for `source`, or "": it must
// be for source's arch, hold exactly source's name expressions, and pass cache::cubin_problem
// (the SHA-256 of its bytes, the ELF structure, every lowered name a kernel of the image).
std::string stored_cubin_problem(const cache::CubinRecord& record,
                                 const gen::GeneratedSource& source);

// db may be null. The database's cubins of source's source key (gen::source_key) come first, of
// any NVRTC version, found without loading NVRTC; then the cubin of its compile key (which loads
// NVRTC for its version; a row stored without a source key gets one when write_back); then
// NVRTC. A stored cubin that fails stored_cubin_problem is compiled again (and its row
// replaced when write_back), with a warning; without allow_compile it is kt::Error (kDatabase)
// naming the problem. allow_compile = false turns a miss into kt::Error (kNotFound).
// write_back = false never writes (read-only runtimes).
CubinResult get_or_compile(cache::Database* db, const gen::GeneratedSource& source,
                           bool allow_compile, bool write_back);

// get_or_compile of each source at once, on up to the machine's hardware threads (NVRTC
// programs compile in parallel, as `kerntune compile` runs them; the database serializes its
// own calls): per source its result, or the kt::Error message it failed with. Needs no CUDA
// context.
struct CubinAttempt {
  std::optional<CubinResult> cubin;
  std::string error;  // when !cubin
};
std::vector<CubinAttempt> get_or_compile_each(cache::Database* db,
                                              const std::vector<gen::GeneratedSource>& sources,
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
