// The op registry: every op registered once (src/ops/registered_ops.cpp), keyed by its name
// (the CLI's --op) and its problem-key prefix ("gemm:", "attn:", "rmsnorm:"). An entry holds the
// op's facet for each layer; the runtime and the tuner reach their facets through it, so no
// layer above core names an op.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/op_spec.hpp"

namespace kt::rt {
class OpLauncher;  // runtime/op_launcher.hpp: loads and launches the op's kernels
}
namespace kt::tune {
class OpTuning;  // tuner/op_tuning.hpp: the op's workload and search for the tuner
}

namespace kt {

struct OpEntry {
  std::shared_ptr<const OpSpec> spec;
  std::shared_ptr<const rt::OpLauncher> launcher;
  std::shared_ptr<const tune::OpTuning> tuning;
};

class OpRegistry {
 public:
  static OpRegistry& instance();

  // Adds an op; throws kt::Error when its name or key prefix is taken or a facet is missing.
  void add(OpEntry entry);
  // Throws kt::Error (invalid argument) listing the registered ops.
  const OpEntry& by_name(std::string_view name) const;
  const OpEntry* find_by_name(std::string_view name) const;  // null for no registered op
  // The op whose prefix starts `problem_key`; throws kt::Error (invalid argument) naming the
  // key and the known prefixes.
  const OpEntry& by_key(std::string_view problem_key) const;
  const OpEntry* find_by_key(std::string_view problem_key) const;
  const std::vector<OpEntry>& all() const { return ops_; }
  std::vector<std::string> names() const;

 private:
  std::vector<OpEntry> ops_;
};

// Registers at static initialization: `const OpRegistrar kRegistered(make_entry);`.
struct OpRegistrar {
  explicit OpRegistrar(OpEntry (*make)());
};

// Shorthands: the spec of the op named `name`, or of the op `problem_key` belongs to.
inline const OpSpec& op_spec(std::string_view name) {
  return *OpRegistry::instance().by_name(name).spec;
}
inline const OpSpec& op_spec_for_key(std::string_view problem_key) {
  return *OpRegistry::instance().by_key(problem_key).spec;
}

}  // namespace kt
