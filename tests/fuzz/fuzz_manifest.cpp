// Fuzzes the fleet manifest parser (and the recorder's lines through it): any text is either
// refused with a kt::Error naming the source and a line ("m:<line>: ...") or parsed into a
// manifest whose canonical text parses back to the same problems, devices and tuning, with the
// same hash; every problem's manifest line names that problem again.
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/manifest.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = kt::fuzz::as_text(data, size);
  kt::Manifest m;
  try {
    m = kt::parse_manifest(text, "m");
  } catch (const kt::Error& e) {
    if (e.kind() != kt::ErrorKind::kInvalidArgument) std::abort();
    if (std::string(e.what()).rfind("m:", 0) != 0) std::abort();
    return 0;
  }
  const std::string canonical = kt::to_text(m);
  const kt::Manifest again = kt::parse_manifest(canonical, "canonical");
  if (again.problem_keys != m.problem_keys || !(again.tuning == m.tuning) ||
      again.devices.size() != m.devices.size())
    std::abort();
  for (std::size_t i = 0; i < m.devices.size(); ++i)
    if (again.devices[i].desc().fingerprint() != m.devices[i].desc().fingerprint()) std::abort();
  if (kt::to_text(again) != canonical || kt::manifest_sha256(again) != kt::manifest_sha256(m))
    std::abort();
  for (const std::string& key : m.problem_keys) {
    const kt::Manifest one =
        kt::parse_manifest("kerntune-manifest 1\ndevice h200\n" + kt::problem_line(key), "line");
    if (one.problem_keys.size() != 1 || one.problem_keys[0] != key) std::abort();
  }
  return 0;
}
