// What the benchmark worker measures candidates on: one problem instantiated on the GPU (inputs,
// poisoned output, reference) and the candidates' kernels loaded from their cubins, behind one
// interface for every op. Configs are opaque here: a candidate is its config key and cubin.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cache/database.hpp"
#include "core/device_desc.hpp"
#include "runtime/module_cache.hpp"
#include "tuner/output_check.hpp"

namespace kt::tune {

class BenchTarget {
 public:
  virtual ~BenchTarget() = default;
  // Loads the candidate's kernel from `cubin` (again only when the config key is new).
  virtual void load(const std::string& config_key, const cache::CubinRecord& cubin) = 0;
  // Enqueues one run of a loaded candidate on `stream`, on operand set `set`
  // (0 <= set < num_operand_sets(); set 0 is the one poison_output and check_output see).
  virtual CUresult launch(const std::string& config_key, CUstream stream, int set) = 0;
  virtual int num_operand_sets() const = 0;
  virtual void poison_output() = 0;        // enqueued
  virtual OutputCheck check_output() = 0;  // synchronizes
};

// The target of the op `problem_key` belongs to (its OpTuning facet), its inputs drawn from
// `seed`; check kernels come from `db` (may be null) or NVRTC. Throws kt::Error
// (kInvalidArgument) for a key of no registered op.
std::unique_ptr<BenchTarget> make_bench_target(const std::string& problem_key,
                                               const DeviceDesc& device, cache::Database* db,
                                               rt::ModuleCache& modules, CUstream stream,
                                               std::uint64_t seed, std::size_t workspace_bytes);

}  // namespace kt::tune
