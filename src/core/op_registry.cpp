// The op registry's lookups; registration happens before main (OpRegistrar).
#include "core/op_registry.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kt {

OpRegistry& OpRegistry::instance() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(OpEntry entry) {
  if (!entry.spec || !entry.launcher || !entry.tuning)
    throw Error(ErrorKind::kInternal, "an op registers a spec, a launcher and a tuning facet");
  for (const OpEntry& op : ops_) {
    const std::string name = op.spec->name(), prefix = op.spec->key_prefix();
    if (name == entry.spec->name() || prefix.starts_with(entry.spec->key_prefix()) ||
        entry.spec->key_prefix().starts_with(prefix))
      throw Error(ErrorKind::kInternal,
                  fmt::format("op '{}' (prefix '{}') collides with op '{}' (prefix '{}')",
                              entry.spec->name(), entry.spec->key_prefix(), name, prefix));
  }
  ops_.push_back(std::move(entry));
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const OpEntry& op : ops_) out.push_back(op.spec->name());
  return out;
}

const OpEntry* OpRegistry::find_by_name(std::string_view name) const {
  for (const OpEntry& op : ops_)
    if (op.spec->name() == name) return &op;
  return nullptr;
}

const OpEntry& OpRegistry::by_name(std::string_view name) const {
  if (const OpEntry* op = find_by_name(name)) return *op;
  throw_invalid(
      fmt::format("unknown op '{}': the registered ops are {} (`kerntune ops` lists "
                  "them with their shape syntax)",
                  name, fmt::join(names(), ", ")));
}

const OpEntry* OpRegistry::find_by_key(std::string_view problem_key) const {
  for (const OpEntry& op : ops_)
    if (problem_key.starts_with(op.spec->key_prefix())) return &op;
  return nullptr;
}

const OpEntry& OpRegistry::by_key(std::string_view problem_key) const {
  if (const OpEntry* op = find_by_key(problem_key)) return *op;
  std::vector<std::string> prefixes;
  for (const OpEntry& op : ops_) prefixes.push_back(op.spec->key_prefix());
  throw_invalid(fmt::format("problem key '{}' belongs to no registered op: keys start with {}",
                            problem_key, fmt::join(prefixes, ", ")));
}

OpRegistrar::OpRegistrar(OpEntry (*make)()) { OpRegistry::instance().add(make()); }

}  // namespace kt
