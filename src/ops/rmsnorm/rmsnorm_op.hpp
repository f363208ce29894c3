// The RMSNorm op's facets, registered together in src/ops/registered_ops.cpp.
#pragma once

#include <memory>

#include "core/op_registry.hpp"

namespace kt {

std::shared_ptr<const OpSpec> make_rmsnorm_spec();
std::shared_ptr<const rt::OpLauncher> make_rmsnorm_launcher();
std::shared_ptr<const tune::OpTuning> make_rmsnorm_tuning();

inline OpEntry make_rmsnorm_op() {
  return {make_rmsnorm_spec(), make_rmsnorm_launcher(), make_rmsnorm_tuning()};
}

}  // namespace kt
