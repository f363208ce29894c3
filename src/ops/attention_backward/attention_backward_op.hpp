// The attention backward op's facets, registered together in src/ops/registered_ops.cpp.
#pragma once

#include <memory>

#include "core/op_registry.hpp"

namespace kt {

std::shared_ptr<const OpSpec> make_attention_backward_spec();
std::shared_ptr<const rt::OpLauncher> make_attention_backward_launcher();
std::shared_ptr<const tune::OpTuning> make_attention_backward_tuning();

inline OpEntry make_attention_backward_op() {
  return {make_attention_backward_spec(), make_attention_backward_launcher(),
          make_attention_backward_tuning()};
}

}  // namespace kt
