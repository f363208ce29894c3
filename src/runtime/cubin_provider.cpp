// Cubins from the database, checked before use, else from NVRTC; stale or damaged stored cubins
// rebuilt.
#include "runtime/cubin_provider.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace kt::rt {

cache::CubinRecord to_record(const gen::CompiledKernel& compiled) {
  return {.compile_key = compiled.compile_key,
          .source_key = compiled.source_key,
          .arch = compiled.arch,
          .source_name = compiled.source_name,
          .name_expressions = compiled.name_expressions,
          .lowered_names = compiled.lowered_names,
          .cubin = compiled.cubin,
          .cubin_sha256 = cache::cubin_sha256(compiled.cubin),
          .registers = compiled.resources(0).registers,
          .spill_bytes = compiled.report.total_spill_bytes(),
          .smem_static_bytes = compiled.resources(0).smem_static_bytes,
          .log = compiled.log,
          .nvrtc_version = compiled.nvrtc_version,
          .compile_ms = compiled.compile_ms};
}

std::string stored_cubin_problem(const cache::CubinRecord& record,
                                 const gen::GeneratedSource& source) {
  if (record.arch != source.arch)
    return fmt::format("it is for {}, not {}", cache::printable(record.arch), source.arch);
  if (record.name_expressions != source.name_expressions)
    return fmt::format(
        "its kernels ({}) are not the ones asked for ({})",
        cache::printable(record.name_expressions.empty() ? std::string("none")
                                                         : record.name_expressions.front()),
        source.name_expressions.empty() ? "none" : source.name_expressions.front());
  return cache::cubin_problem(record);
}

CubinResult get_or_compile(cache::Database* db, const gen::GeneratedSource& source,
                           bool allow_compile, bool write_back) {
  const std::string source_key = gen::source_key(source);
  if (db != nullptr) {
    // NOTE: found by source key, a cubin of any NVRTC version serves, and NVRTC is not loaded:
    // a machine with the driver alone dispatches from a shipped database.
    for (cache::CubinRecord& found : db->find_cubins_by_source(source_key, source.arch)) {
      const std::string problem = stored_cubin_problem(found, source);
      if (problem.empty()) {
        logger().debug("cubin hit {} source_key={} nvrtc={}", source.name, source_key.substr(0, 12),
                       found.nvrtc_version);
        return {std::move(found), false};
      }
      logger().warn("stored cubin fails its check; not served kernel={} key={} problem=\"{}\"",
                    source.name, found.compile_key.substr(0, 12), problem);
    }
  }
  std::string key;
  try {
    key = gen::compile_key(source);  // loads NVRTC, for its version
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNotFound) throw;
    throw Error(ErrorKind::kNotFound,
                fmt::format("no stored cubin serves {} ({}), and finding or compiling one needs "
                            "NVRTC: {}",
                            source.name,
                            db != nullptr ? fmt::format("database '{}'", db->path())
                                          : std::string("no database"),
                            e.what()));
  }
  if (db != nullptr) {
    if (auto found = db->find_cubin(key)) {
      const std::string problem = stored_cubin_problem(*found, source);
      if (problem.empty()) {
        logger().debug("cubin hit {} key={}", source.name, key.substr(0, 12));
        if (found->source_key.empty() && write_back) {
          // A row from before source keys: given one, the next lookup needs no NVRTC.
          found->source_key = source_key;
          db->put_cubin(*found);
        }
        return {std::move(*found), false};
      }
      if (!allow_compile) {
        throw Error(ErrorKind::kDatabase,
                    fmt::format("the cubin stored for {} in '{}' (compile key {}) is not used: {}. "
                                "`kerntune doctor --db '{}'` checks every stored cubin; allow "
                                "compilation to rebuild it",
                                source.name, db->path(), key.substr(0, 12), problem, db->path()));
      }
      logger().warn(
          "stored cubin fails its check; compiling it again kernel={} key={} problem=\"{}\" "
          "replace_row={}",
          source.name, key.substr(0, 12), problem, write_back);
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

namespace {

// Driver results that mean "this image cannot serve this device", not "the device is broken".
bool is_stale_image(int code) {
  switch (code) {
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_FOUND:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::vector<CubinAttempt> get_or_compile_each(cache::Database* db,
                                              const std::vector<gen::GeneratedSource>& sources,
                                              bool allow_compile, bool write_back) {
  std::vector<CubinAttempt> attempts(sources.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < sources.size(); i = next++) {
      try {
        attempts[i].cubin = get_or_compile(db, sources[i], allow_compile, write_back);
      } catch (const std::exception& e) {
        attempts[i].error = e.what();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), sources.size());
  std::vector<std::future<void>> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.push_back(std::async(std::launch::async, work));
  work();
  for (std::future<void>& f : pool) f.get();
  return attempts;
}

const LoadedModule& load_or_rebuild(ModuleCache& modules, CubinResult& cubin, cache::Database* db,
                                    const gen::GeneratedSource& source, bool allow_compile,
                                    bool write_back) {
  try {
    return modules.load(cubin.record);
  } catch (const CudaError& error) {
    if (cubin.compiled_now || !is_stale_image(error.code()) || !allow_compile) throw;
    logger().warn(
        "stored cubin does not load; rebuilding it from source kernel={} key={} arch={} "
        "nvrtc={} error=\"{}\" replace_row={}",
        source.name, cubin.record.compile_key.substr(0, 12), cubin.record.arch,
        cubin.record.nvrtc_version, error.what(), db != nullptr && write_back);
  }
  cubin = CubinResult{to_record(gen::compile(source)), true};
  if (db != nullptr && write_back) db->put_cubin(cubin.record);
  return modules.load(cubin.record);
}

}  // namespace kt::rt
