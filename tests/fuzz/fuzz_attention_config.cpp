// Fuzzes the attention config key parser: any text is refused with a kt::Error or parsed into a
// config whose key is the text; a config that validates on the h200 profile yields a launch plan
// and model estimate without crashing.
#include <cstdlib>

#include "core/attention_config.hpp"
#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kt::fuzz::as_text(data, size);
  try {
    const kt::AttentionConfig c = kt::parse_attention_config_key(text);
    if (kt::to_key(c) != text) std::abort();
    kt::AttentionProblem p;
    p.batch = 2;
    p.heads_q = 16;
    p.heads_kv = 4;
    p.seqlen_q = p.seqlen_k = 1000 + static_cast<std::int64_t>(size);
    p.head_dim = size % 2 == 0 ? 128 : 64;
    p.causal = size % 3 == 0;
    const kt::DeviceDesc& device = kt::device_profile("h200");
    if (!kt::validate(p, c, device)) {
      if (kt::plan_launch(p, c).block[0] == 0) std::abort();
      if (!(kt::estimate(p, c, device).predicted_us > 0)) std::abort();
      (void)kt::attention_kernel_expression(p, c, size % 2 == 0);
    }
  } catch (const kt::Error&) {
  }
  return 0;
}
