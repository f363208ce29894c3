// make_bench_target: the op's own target, found by the problem key's prefix.
#include "tuner/bench_target.hpp"

#include "core/op_registry.hpp"
#include "tuner/op_tuning.hpp"

namespace kt::tune {

std::unique_ptr<BenchTarget> make_bench_target(const std::string& problem_key,
                                               const DeviceDesc& device, cache::Database* db,
                                               rt::ModuleCache& modules, CUstream stream,
                                               std::uint64_t seed, std::size_t workspace_bytes) {
  const OpEntry& op = OpRegistry::instance().by_key(problem_key);
  return op.tuning->make_bench_target(
      {problem_key, device, db, &modules, stream, seed, workspace_bytes});
}

}  // namespace kt::tune
