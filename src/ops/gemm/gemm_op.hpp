// The GEMM op's facets, registered together in src/ops/registered_ops.cpp.
#pragma once

#include <memory>

#include "core/op_registry.hpp"

namespace kt {

std::shared_ptr<const OpSpec> make_gemm_spec();
std::shared_ptr<const rt::OpLauncher> make_gemm_launcher();
std::shared_ptr<const tune::OpTuning> make_gemm_tuning();

inline OpEntry make_gemm_op() {
  return {make_gemm_spec(), make_gemm_launcher(), make_gemm_tuning()};
}

}  // namespace kt
