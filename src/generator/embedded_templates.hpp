// The kernel templates compiled into the binary (see cmake/write_embedded.cmake): NVRTC gets
// them as in-memory headers named "kerntune/<path under templates/>".
#pragma once

#include <string_view>
#include <vector>

namespace kt::gen {

struct EmbeddedFile {
  std::string_view name;  // e.g. "kerntune/gemm/gemm_sm80.cuh"
  std::string_view contents;
};

const std::vector<EmbeddedFile>& embedded_templates();

}  // namespace kt::gen
