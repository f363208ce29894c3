// AttentionProblem: validation, keys and shape parsing.
#include "core/attention_problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt {

namespace {

// Visible (query, key) pairs of one head of one sequence.
double sequence_pairs(std::int64_t seqlen_q, std::int64_t seqlen_k, bool causal) {
  double per_head = double(seqlen_q) * double(seqlen_k);
  if (causal && seqlen_q >= 1 && seqlen_k >= 1) {
    // Row i sees keys j <= i + (seqlen_k - seqlen_q): clamp(i + offset + 1, 0, seqlen_k). Rows
    // before `first` see none, rows [first, last) see i + offset + 1, and the last row sees
    // all seqlen_k keys. In closed form, so that any size costs the same (the fuzzer found a
    // loop over 2^31 rows).
    const double offset = double(seqlen_k - seqlen_q);
    const double first = double(std::clamp<std::int64_t>(seqlen_q - seqlen_k, 0, seqlen_q));
    const double last = double(seqlen_q - 1);
    const double rows = last - first;
    per_head = rows * (offset + 1) + (first + last - 1) * rows / 2 + double(seqlen_k);
  }
  return per_head;
}

std::int64_t next_power_of_two(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

double AttentionProblem::visible_pairs() const {
  if (!varlen) return sequence_pairs(seqlen_q, seqlen_k, causal) * double(batch) * double(heads_q);
  const auto q = varlen_lengths(*this, false), k = varlen_lengths(*this, true);
  double pairs = 0;
  for (std::size_t i = 0; i < q.size(); ++i) pairs += sequence_pairs(q[i], k[i], causal);
  return pairs * double(heads_q);
}

double AttentionProblem::min_bytes() const {
  const double e = size_bytes(dtype);
  const double rows_q = varlen ? double(total_q) : double(batch) * double(seqlen_q);
  const double rows_k = varlen ? double(total_k) : double(batch) * double(seqlen_k);
  return e * double(head_dim) * (2.0 * double(heads_q) * rows_q + 2.0 * double(heads_kv) * rows_k);
}

std::vector<std::int64_t> varlen_lengths(const AttentionProblem& p, bool keys) {
  const std::int64_t longest = keys ? p.seqlen_k : p.seqlen_q;
  const std::int64_t total = keys ? p.total_k : p.total_q;
  std::vector<std::int64_t> lengths(std::size_t(p.batch), 0);
  lengths[0] = longest;
  const std::int64_t others = p.batch - 1;
  for (std::int64_t i = 1; i < p.batch; ++i)
    lengths[std::size_t(i)] = (total - longest) / others + (i - 1 < (total - longest) % others);
  return lengths;
}

AttentionProblem varlen_bucket(const AttentionProblem& exact) {
  AttentionProblem b = exact;
  b.seqlen_q = std::max<std::int64_t>(64, next_power_of_two(exact.seqlen_q));
  b.seqlen_k = std::max<std::int64_t>(64, next_power_of_two(exact.seqlen_k));
  b.total_q =
      std::clamp(next_power_of_two(exact.total_q), b.seqlen_q + b.batch - 1, b.batch * b.seqlen_q);
  b.total_k =
      std::clamp(next_power_of_two(exact.total_k), b.seqlen_k + b.batch - 1, b.batch * b.seqlen_k);
  return b;
}

void validate(const AttentionProblem& p) {
  const struct {
    const char* name;
    std::int64_t value;
  } sizes[] = {{"batch (b)", p.batch},         {"heads_q (hq)", p.heads_q},
               {"heads_kv (hkv)", p.heads_kv}, {"seqlen_q (sq)", p.seqlen_q},
               {"seqlen_k (sk)", p.seqlen_k},  {"head_dim (d)", p.head_dim}};
  for (const auto& s : sizes) {
    if (s.value < 1) throw_invalid(fmt::format("attention {} = {}: must be >= 1", s.name, s.value));
    if (s.value > std::numeric_limits<std::int32_t>::max())
      throw_invalid(fmt::format("attention {} = {} exceeds 2^31-1", s.name, s.value));
  }
  if (p.heads_q % p.heads_kv != 0)
    throw_invalid(
        fmt::format("attention heads_q = {} is not a multiple of heads_kv = {} (GQA "
                    "needs an equal number of query heads per key/value head)",
                    p.heads_q, p.heads_kv));
  if (p.head_dim != 64 && p.head_dim != 96 && p.head_dim != 128 && p.head_dim != 256)
    throw_invalid(fmt::format(
        "attention head_dim = {} is not supported: expected 64, 96, 128 or 256", p.head_dim));
  if (!is_16bit(p.dtype)) throw_invalid("attention dtype must be bf16 or fp16");
  if (p.varlen) {
    // One grid row a sequence (and the synthetic batch is a vector of them).
    if (p.batch > 65535)
      throw_invalid(
          fmt::format("attention varlen batch (b) = {} exceeds 65535 sequences", p.batch));
    const struct {
      const char* name;
      std::int64_t total, longest;
    } totals[] = {{"total_q (tq)", p.total_q, p.seqlen_q}, {"total_k (tk)", p.total_k, p.seqlen_k}};
    for (const auto& t : totals) {
      if (t.total > std::numeric_limits<std::int32_t>::max())
        throw_invalid(fmt::format("attention {} = {} exceeds 2^31-1", t.name, t.total));
      if (t.total < t.longest + p.batch - 1 || t.total > p.batch * t.longest)
        throw_invalid(fmt::format(
            "attention {} = {} cannot be the rows of {} sequences whose longest has {}: "
            "expected {} to {}",
            t.name, t.total, p.batch, t.longest, t.longest + p.batch - 1, p.batch * t.longest));
    }
  } else if (p.total_q != 0 || p.total_k != 0) {
    throw_invalid("attention totals (tq, tk) are for packed varlen batches only");
  }
  const double elems_q =
      double(p.varlen ? p.total_q : p.batch * p.seqlen_q) * p.heads_q * p.head_dim;
  const double elems_k =
      double(p.varlen ? p.total_k : p.batch * p.seqlen_k) * p.heads_kv * p.head_dim;
  constexpr double kMax = 9.2e18;
  if (elems_q > kMax || elems_k > kMax) throw_invalid("attention tensors are too large to index");
}

std::string to_key(const AttentionProblem& p) {
  return fmt::format("attn:{}:b{}.hq{}.hkv{}.sq{}.sk{}.d{}.{}{}", to_string(p.dtype), p.batch,
                     p.heads_q, p.heads_kv, p.seqlen_q, p.seqlen_k, p.head_dim,
                     p.causal ? "causal" : "full",
                     p.varlen ? fmt::format(".varlen.tq{}.tk{}", p.total_q, p.total_k) : "");
}

AttentionProblem parse_attention_key(std::string_view key) {
  const auto parts = split(key, ':');
  const char* hint =
      "expected attn:DTYPE:bB.hqH.hkvH.sqS.skS.dD.causal|full, with .varlen.tqT.tkT for a "
      "packed batch";
  if (parts.size() != 3 || parts[0] != "attn")
    throw_invalid(fmt::format("'{}' is not an attention problem key: {}", key, hint));
  AttentionProblem p;
  p.dtype = parse_dtype(parts[1]);
  const auto fields = split(parts[2], '.');
  if (fields.size() != 7 && !(fields.size() == 10 && fields[7] == "varlen"))
    throw_invalid(fmt::format("'{}': {}", key, hint));
  struct Field {
    const char* prefix;
    std::int64_t* value;
  };
  const Field named[] = {{"b", &p.batch},     {"hq", &p.heads_q},  {"hkv", &p.heads_kv},
                         {"sq", &p.seqlen_q}, {"sk", &p.seqlen_k}, {"d", &p.head_dim}};
  for (int i = 0; i < 6; ++i) {
    const std::string_view prefix = named[i].prefix;
    if (fields[i].substr(0, prefix.size()) != prefix)
      throw_invalid(
          fmt::format("'{}': field {} should start with '{}'; {}", key, i + 1, prefix, hint));
    *named[i].value =
        parse_int(fields[i].substr(prefix.size()), fmt::format("attention key field '{}'", prefix));
  }
  if (fields[6] != "causal" && fields[6] != "full")
    throw_invalid(fmt::format("'{}': the mask must be 'causal' or 'full'", key));
  p.causal = fields[6] == "causal";
  if (fields.size() == 10) {
    p.varlen = true;
    const Field totals[] = {{"tq", &p.total_q}, {"tk", &p.total_k}};
    for (int i = 0; i < 2; ++i) {
      const std::string_view prefix = totals[i].prefix;
      if (fields[8 + i].substr(0, prefix.size()) != prefix)
        throw_invalid(
            fmt::format("'{}': field {} should start with '{}'; {}", key, 9 + i, prefix, hint));
      *totals[i].value = parse_int(fields[8 + i].substr(prefix.size()),
                                   fmt::format("attention key field '{}'", prefix));
    }
  }
  validate(p);
  if (to_key(p) != key)
    throw_invalid(
        fmt::format("attention key '{}' is not canonical: write it as '{}'", key, to_key(p)));
  return p;
}

void parse_attention_shape(std::string_view shape, AttentionProblem& p) {
  const char* hint = "expected e.g. b=4,hq=32,hkv=8,sq=4096,sk=4096,d=128";
  // Each name sets one or two fields; a field set twice (b=1,b=2 or h=8,hq=8) is an error.
  struct Name {
    const char* name;
    std::int64_t* first;
    std::int64_t* second;
  };
  const Name names[] = {{"b", &p.batch, nullptr},        {"hq", &p.heads_q, nullptr},
                        {"hkv", &p.heads_kv, nullptr},   {"h", &p.heads_q, &p.heads_kv},
                        {"sq", &p.seqlen_q, nullptr},    {"sk", &p.seqlen_k, nullptr},
                        {"s", &p.seqlen_q, &p.seqlen_k}, {"d", &p.head_dim, nullptr},
                        {"tq", &p.total_q, nullptr},     {"tk", &p.total_k, nullptr}};
  std::vector<const std::int64_t*> set;
  const auto is_set = [&set](const std::int64_t* field) {
    return std::find(set.begin(), set.end(), field) != set.end();
  };
  for (std::string_view item : split(shape, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw_invalid(fmt::format("attention shape item '{}' is not NAME=VALUE; {}", item, hint));
    const std::string_view name = item.substr(0, eq);
    const auto entry = std::find_if(std::begin(names), std::end(names),
                                    [name](const Name& n) { return name == n.name; });
    if (entry == std::end(names))
      throw_invalid(fmt::format(
          "unknown attention shape field '{}': use b, hq, hkv, h, sq, sk, s, d (and tq, tk for "
          "a packed varlen batch); {}",
          name, hint));
    if (is_set(entry->first) || (entry->second != nullptr && is_set(entry->second)))
      throw_invalid(
          fmt::format("attention shape '{}' sets '{}' twice (h= sets hq and hkv, s= sets "
                      "sq and sk); give each size once",
                      shape, name));
    const std::int64_t value =
        parse_int(item.substr(eq + 1), fmt::format("attention shape field '{}'", name));
    for (std::int64_t* field : {entry->first, entry->second}) {
      if (field == nullptr) continue;
      *field = value;
      set.push_back(field);
    }
  }
  const struct {
    const std::int64_t* field;
    const char* what;
  } required[] = {{&p.batch, "the batch b"},
                  {&p.heads_q, "the head count hq (or h)"},
                  {&p.seqlen_q, "the query length sq (or s)"},
                  {&p.head_dim, "the head dimension d"}};
  for (const auto& r : required)
    if (!is_set(r.field))
      throw_invalid(fmt::format("attention shape '{}' lacks {}; {}", shape, r.what, hint));
  if (!is_set(&p.heads_kv)) p.heads_kv = p.heads_q;
  if (!is_set(&p.seqlen_k)) p.seqlen_k = p.seqlen_q;
  if (is_set(&p.total_k) && !is_set(&p.total_q))
    throw_invalid(
        fmt::format("attention shape '{}' gives tk without tq; a packed varlen batch "
                    "needs tq (tk defaults to it)",
                    shape));
  p.varlen = is_set(&p.total_q);
  if (p.varlen && !is_set(&p.total_k)) p.total_k = p.total_q;
  validate(p);
}

}  // namespace kt
