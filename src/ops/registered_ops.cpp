// Every op kerntune serves: one line each. Adding an op is its folder under src/ops/ and a line
// here (docs/ARCHITECTURE.md, "Adding an op").
#include "ops/attention/attention_op.hpp"
#include "ops/attention_backward/attention_backward_op.hpp"
#include "ops/gemm/gemm_op.hpp"
#include "ops/rmsnorm/rmsnorm_op.hpp"

namespace kt {
namespace {

const OpRegistrar kGemm(make_gemm_op);
const OpRegistrar kAttention(make_attention_op);
const OpRegistrar kAttentionBackward(make_attention_backward_op);
const OpRegistrar kRmsnorm(make_rmsnorm_op);

}  // namespace
}  // namespace kt
