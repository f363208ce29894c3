// Fuzzes the attention problem key and shape parsers: any text is either refused with a
// kt::Error or parsed into a valid problem whose key parses back to it, with finite FLOP and
// byte counts (computed in bounded time whatever the sizes).
#include <cmath>
#include <cstdlib>

#include "core/attention_problem.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kt::fuzz::as_text(data, size);
  try {
    const kt::AttentionProblem p = kt::parse_attention_key(text);
    if (kt::to_key(p) != text) std::abort();
    if (!std::isfinite(p.flops()) || !(p.min_bytes() > 0)) std::abort();
  } catch (const kt::Error&) {
  }
  try {
    kt::AttentionProblem p;
    kt::parse_attention_shape(text, p);
    p.causal = size % 2 == 1;
    if (!(kt::parse_attention_key(kt::to_key(p)) == p)) std::abort();
    if (!std::isfinite(p.flops()) || p.visible_pairs() < 0) std::abort();
  } catch (const kt::Error&) {
  }
  return 0;
}
