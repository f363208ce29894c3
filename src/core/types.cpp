// Canonical spellings of dtypes and layouts.
#include "core/types.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kt {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return "bf16";
    case DType::kFP16:
      return "fp16";
    case DType::kFP32:
      return "fp32";
  }
  return "?";
}

std::string_view device_type_name(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return "kt::bf16";
    case DType::kFP16:
      return "kt::fp16";
    case DType::kFP32:
      return "float";
  }
  return "?";
}

std::string_view to_string(Layout layout) { return layout == Layout::kNN ? "nn" : "nt"; }

DType parse_dtype(std::string_view text) {
  if (text == "bf16" || text == "bfloat16") return DType::kBF16;
  if (text == "fp16" || text == "f16" || text == "half" || text == "float16") return DType::kFP16;
  if (text == "fp32" || text == "f32" || text == "float" || text == "float32") return DType::kFP32;
  throw_invalid(fmt::format("unknown dtype '{}': expected bf16, fp16 or fp32", text));
}

Layout parse_layout(std::string_view text) {
  if (text == "nn") return Layout::kNN;
  if (text == "nt") return Layout::kNT;
  throw_invalid(fmt::format(
      "unknown layout '{}': expected nn (B is KxN row-major) or nt (B is NxK, the weight "
      "layout of a linear layer)",
      text));
}

int size_bytes(DType dtype) { return dtype == DType::kFP32 ? 4 : 2; }
bool is_16bit(DType dtype) { return dtype != DType::kFP32; }

}  // namespace kt
