// The attention backward problem: dQ, dK, dV of O = softmax(scale · Q·Kᵀ [causal]) · V from dO,
// given the forward's O and row logsumexp, per (batch, query head), GQA/MQA as the forward (dK and
// dV of a key/value head summed over its query heads). What to compute, never how
// (AttentionBackwardConfig); `deterministic` is the caller's demand that dQ be summed in a fixed
// order (bitwise reproducible run to run), not a tuning choice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/attention_problem.hpp"
#include "core/types.hpp"

namespace kt {

// The forward's fields spelled out, not inherited: the problems are the public API's aggregates,
// and a base class would end their designated initializers ({.causal = true}).
struct AttentionBackwardProblem {
  std::int64_t batch = 1;
  std::int64_t heads_q = 1;
  std::int64_t heads_kv = 1;
  std::int64_t seqlen_q = 1;
  std::int64_t seqlen_k = 1;
  std::int64_t head_dim = 128;
  DType dtype = DType::kBF16;  // Q, K, V, O, dO and dQ, dK, dV
  bool causal = false;         // bottom-right aligned when seqlen_q != seqlen_k, as the forward
  bool deterministic = false;  // dQ summed over key blocks in a fixed order

  // The forward problem whose gradients these are.
  AttentionProblem forward() const;
  double visible_pairs() const { return forward().visible_pairs(); }
  // 10·pairs·d: five matrix products of 2·d FLOPs per visible pair (S = Q·Kᵀ recomputed, dV =
  // Pᵀ·dO, dP = dO·Vᵀ, dK = dSᵀ·Q, dQ = dS·K), 2.5 times the forward's count (FlashAttention's).
  double flops() const { return 10.0 * visible_pairs() * double(head_dim); }
  // Q, K, V, O, dO and the logsumexp read once; dQ, dK, dV written once.
  double min_bytes() const;

  bool operator==(const AttentionBackwardProblem&) const = default;
};

// Throws kt::Error (invalid argument) naming the field: the forward's rules (sizes, GQA,
// dtype), head_dim 64, 128 (both families), 96 or 256 (fa2), and
// batch · heads_q · seqlen_q rows within 2^31 - 1.
void validate(const AttentionBackwardProblem& problem);

// Canonical key: the forward's with the "attnbwd" op and ".det" appended when deterministic,
// e.g. "attnbwd:bf16:b4.hq32.hkv8.sq4096.sk4096.d128.causal.det".
std::string to_key(const AttentionBackwardProblem& problem);
// Throws kt::Error (invalid argument) naming what is malformed, or the canonical spelling.
AttentionBackwardProblem parse_attention_backward_key(std::string_view key);

// Parses the forward's shape syntax ("b=4,hq=32,hkv=8,sq=4096,sk=4096,d=128"; h= and s= set
// both, hkv defaults to hq, sk to sq) into `problem`; the mask and determinism come from flags.
// Throws naming the bad field, or a packed variable-length batch (tq=, tk=), which the backward
// does not take yet.
void parse_attention_backward_shape(std::string_view shape, AttentionBackwardProblem& problem);

// Device pointers and element strides of one attention backward call. Each tensor is addressed
// as base + b · batch_stride + i · row_stride + h · head_stride + d (head_dim contiguous), so
// both (B, N, H, d) and (B, H, N, d) layouts work without copies; Q, O, dO and dQ have heads_q
// heads and seqlen_q rows, K, V, dK and dV heads_kv heads and seqlen_k rows. Strides must be
// multiples of 8 elements and tensor pointers 16-byte aligned.
struct AttentionBackwardTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;     // the forward's output
  const void* dout = nullptr;  // dO, the gradient of the loss with respect to O
  // [batch, heads_q, seqlen_q] FP32 row logsumexp of the forward (natural log, as the forward's
  // "lse" variant writes it: max · scale + ln Σ exp); -inf for a row that sees no key.
  const float* lse = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  std::int64_t q_strides[3]{};  // batch, row (sequence position), head
  std::int64_t k_strides[3]{};
  std::int64_t v_strides[3]{};
  std::int64_t o_strides[3]{};
  std::int64_t dout_strides[3]{};
  std::int64_t dq_strides[3]{};
  std::int64_t dk_strides[3]{};
  std::int64_t dv_strides[3]{};
  float softmax_scale = 0;  // the forward's; 0: 1 / sqrt(head_dim)

  // Dense (B, N, H, d) strides for every tensor (the FlashAttention layout).
  void set_bnhd_strides(const AttentionBackwardProblem& problem);
  // Dense (B, H, N, d) strides for every tensor (PyTorch SDPA's layout).
  void set_bhnd_strides(const AttentionBackwardProblem& problem);
};

}  // namespace kt
