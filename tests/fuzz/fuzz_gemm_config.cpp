// Fuzzes the GEMM config key parser: any text is refused with a kt::Error or parsed into a
// config whose key is the text; a config that validates on the h200 profile yields a launch plan
// and model estimate without crashing.
#include <cstdlib>

#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/gemm_config.hpp"
#include "core/gemm_model.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kt::fuzz::as_text(data, size);
  try {
    const kt::GemmConfig c = kt::parse_gemm_config_key(text);
    if (kt::to_key(c) != text) std::abort();
    kt::GemmProblem p;
    p.m = 1000 + static_cast<std::int64_t>(size);
    p.n = 4096;
    p.k = size % 2 == 0 ? 4096 : 4095;
    const kt::DeviceDesc& device = kt::device_profile("h200");
    if (!kt::validate(p, c, device)) {
      const kt::GemmLaunch plan = kt::plan_launch(p, c);
      if (plan.main.block[0] == 0) std::abort();
      if (!(kt::estimate(p, c, device).predicted_us > 0)) std::abort();
      (void)kt::gemm_kernel_expression(p, c);
    }
  } catch (const kt::Error&) {
  }
  return 0;
}
