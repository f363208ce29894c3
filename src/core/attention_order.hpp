// The forward's causal work order on the host: how many (head, batch) entries a section of the
// tiles' order holds (common/work_order.h), for the parameter block, the model of persistent CTAs
// and `explain`.
#pragma once

#include <cstdint>

#include "common/work_order.h"
#include "core/attention_problem.hpp"

namespace kt {

// The K and V bytes of an entry: a key/value head's K and V over the query heads that share it.
inline std::int64_t attention_entry_kv_bytes(const AttentionProblem& p) {
  return 2 * p.seqlen_k * p.head_dim * std::int64_t(size_bytes(p.dtype)) / (p.heads_q / p.heads_kv);
}

// The entries of a causal section of a grid of one CTA a query block: the most whose K and V fit
// kSectionBytes, at most kSectionEntriesMax (common/work_order.h).
inline int attention_causal_section(const AttentionProblem& p) {
  return section_entries(attention_entry_kv_bytes(p));
}

// The most entries whose K and V fit kSectionBytes, whatever their number: the largest section a
// persistent grid chooses among (persistent_causal_section).
inline int attention_l2_section(const AttentionProblem& p) {
  return section_entries(attention_entry_kv_bytes(p), kSectionEntriesAny);
}

}  // namespace kt
