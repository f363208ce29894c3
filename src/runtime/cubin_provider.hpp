// Where cubins come from: the database when present (a warm start never calls NVRTC), else
// NVRTC, with the result written back when the database is writable.
#pragma once

#include "cache/database.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_compiler.hpp"

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

}  // namespace kt::rt
