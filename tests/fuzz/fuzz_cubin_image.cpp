// Fuzzes the cubin check that guards cuModuleLoadData: any bytes, as a cubin that should hold the
// kernel "_Z1kv", are accepted or refused with a reason, never read past their end (ASan), and a
// kernel name taken from the input demangles or not without a crash.
#include <string>
#include <vector>

#include "cache/cubin_image.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // An exact-size copy, so that ASan sees a read one byte past the blob.
  const std::vector<char> bytes(data, data + size);
  (void)kt::cache::cubin_image_problem(bytes, {"_Z1kv"});
  const std::string_view text = kt::fuzz::as_text(data, size);
  (void)kt::cache::demangled_expression(std::string(text.substr(0, text.find('\0'))));
  return 0;
}
