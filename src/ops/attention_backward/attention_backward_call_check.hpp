// Attention backward's call checks that need no device: the problem, null or misaligned tensors,
// strides (an output's must not collide) and the scale.
#pragma once

#include "ops/attention_backward/attention_backward_problem.hpp"

namespace kt {

// Throws kt::Error (invalid argument) naming the tensor and what is wrong with it. Run by the
// launcher's check_call before any lookup, compile or driver call.
void check_attention_backward_call(const AttentionBackwardProblem& problem,
                                   const AttentionBackwardTensors& tensors);

}  // namespace kt
