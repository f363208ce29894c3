// AttentionBackwardProblem: validation, keys, shape parsing and the call's dense strides.
#include "ops/attention_backward/attention_backward_problem.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt {

namespace {

constexpr std::string_view kOp = "attnbwd";

}  // namespace

AttentionProblem AttentionBackwardProblem::forward() const {
  AttentionProblem p;
  copy_attention_sizes(p, *this);
  p.dtype = dtype;
  p.causal = causal;
  return p;
}

double AttentionBackwardProblem::min_bytes() const {
  const double e = size_bytes(dtype);
  const double q_rows = double(batch) * double(heads_q) * double(seqlen_q);
  const double kv_rows = double(batch) * double(heads_kv) * double(seqlen_k);
  // Q, O, dO read and dQ written; K, V read and dK, dV written; the logsumexp read.
  return e * double(head_dim) * (4.0 * q_rows + 4.0 * kv_rows) + 4.0 * q_rows;
}

void validate(const AttentionBackwardProblem& p) {
  if (p.head_dim >= 1 && p.head_dim != 64 && p.head_dim != 96 && p.head_dim != 128 &&
      p.head_dim != 256)
    throw_invalid(fmt::format(
        "attention backward head_dim = {} is not supported; expected 64, 96, 128 or 256",
        p.head_dim));
  validate(p.forward());
  const double rows = double(p.batch) * double(p.heads_q) * double(p.seqlen_q);
  if (rows > double(std::numeric_limits<std::int32_t>::max()))
    throw_invalid(fmt::format(
        "attention backward batch x heads_q x seqlen_q = {:.0f} rows exceeds 2^31-1", rows));
}

std::string to_key(const AttentionBackwardProblem& p) {
  return fmt::format("{}:{}:b{}.hq{}.hkv{}.sq{}.sk{}.d{}.{}{}", kOp, to_string(p.dtype), p.batch,
                     p.heads_q, p.heads_kv, p.seqlen_q, p.seqlen_k, p.head_dim,
                     p.causal ? "causal" : "full", p.deterministic ? ".det" : "");
}

AttentionBackwardProblem parse_attention_backward_key(std::string_view key) {
  const char* hint = "expected attnbwd:DTYPE:bB.hqH.hkvH.sqS.skS.dD.causal|full[.det]";
  const auto parts = split(key, ':');
  if (parts.size() != 3 || parts[0] != kOp)
    throw_invalid(fmt::format("'{}' is not an attention backward problem key: {}", key, hint));
  AttentionBackwardProblem p;
  p.dtype = parse_dtype(parts[1]);
  std::vector<std::string_view> fields = split(parts[2], '.');
  if (fields.size() == 8 && fields.back() == "det") {
    p.deterministic = true;
    fields.pop_back();
  }
  if (fields.size() != 7) throw_invalid(fmt::format("'{}': {}", key, hint));
  const struct {
    std::string_view prefix;
    std::int64_t* value;
  } named[] = {{"b", &p.batch},     {"hq", &p.heads_q},  {"hkv", &p.heads_kv},
               {"sq", &p.seqlen_q}, {"sk", &p.seqlen_k}, {"d", &p.head_dim}};
  for (int i = 0; i < 6; ++i) {
    if (!fields[i].starts_with(named[i].prefix))
      throw_invalid(fmt::format("'{}': field {} should start with '{}'; {}", key, i + 1,
                                named[i].prefix, hint));
    *named[i].value = parse_int(fields[i].substr(named[i].prefix.size()),
                                fmt::format("attention backward key field '{}'", named[i].prefix));
  }
  if (fields[6] != "causal" && fields[6] != "full")
    throw_invalid(fmt::format("'{}': the mask must be 'causal' or 'full'; {}", key, hint));
  p.causal = fields[6] == "causal";
  validate(p);
  if (to_key(p) != key)
    throw_invalid(fmt::format("attention backward key '{}' is not canonical: write it as '{}'", key,
                              to_key(p)));
  return p;
}

void parse_attention_backward_shape(std::string_view shape, AttentionBackwardProblem& p) {
  AttentionProblem f = p.forward();
  parse_attention_shape(shape, f);
  if (f.varlen)
    throw_invalid(fmt::format(
        "attention backward shape '{}' names a packed variable-length batch (tq=, tk=): the "
        "backward takes dense batches only, for now",
        shape));
  copy_attention_sizes(p, f);
  validate(p);
}

void AttentionBackwardTensors::set_bnhd_strides(const AttentionBackwardProblem& p) {
  const std::int64_t d = p.head_dim;
  const std::int64_t q[3] = {p.seqlen_q * p.heads_q * d, p.heads_q * d, d};
  const std::int64_t kv[3] = {p.seqlen_k * p.heads_kv * d, p.heads_kv * d, d};
  for (int i = 0; i < 3; ++i) {
    q_strides[i] = o_strides[i] = dout_strides[i] = dq_strides[i] = q[i];
    k_strides[i] = v_strides[i] = dk_strides[i] = dv_strides[i] = kv[i];
  }
}

void AttentionBackwardTensors::set_bhnd_strides(const AttentionBackwardProblem& p) {
  const std::int64_t d = p.head_dim;
  const std::int64_t q[3] = {p.heads_q * p.seqlen_q * d, d, p.seqlen_q * d};
  const std::int64_t kv[3] = {p.heads_kv * p.seqlen_k * d, d, p.seqlen_k * d};
  for (int i = 0; i < 3; ++i) {
    q_strides[i] = o_strides[i] = dout_strides[i] = dq_strides[i] = q[i];
    k_strides[i] = v_strides[i] = dk_strides[i] = dv_strides[i] = kv[i];
  }
}

}  // namespace kt
