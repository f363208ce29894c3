// Fuzzes the GEMM problem key and shape parsers: any text is either refused with a kt::Error or
// parsed into a valid problem whose key parses back to the same problem (keys exactly).
#include <cstdlib>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kt::fuzz::as_text(data, size);
  try {
    const kt::GemmProblem p = kt::parse_gemm_key(text);
    if (kt::to_key(p) != text) std::abort();
    kt::validate(p);
    if (!(p.flops() > 0) || !(p.min_bytes() > 0)) std::abort();
  } catch (const kt::Error&) {
  }
  try {
    kt::GemmProblem p;
    kt::parse_gemm_shape(text, p);
    if (!(kt::parse_gemm_key(kt::to_key(p)) == p)) std::abort();
  } catch (const kt::Error&) {
  }
  return 0;
}
