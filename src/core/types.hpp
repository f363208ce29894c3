// Element types and operand layouts shared by every op, with their canonical spellings.
// to_string and parse_* are exact inverses; the spellings appear in keys, the CLI and the DB.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kt {

enum class DType : std::uint8_t { kBF16, kFP16, kFP32 };

// Layout of GEMM operand B. kNN: B is K×N row-major (N contiguous). kNT: B is N×K row-major
// (K contiguous), the weight layout of a linear layer y = x·Wᵀ. A is always M×K row-major and
// C is always M×N row-major.
enum class Layout : std::uint8_t { kNN, kNT };

std::string_view to_string(DType dtype);
std::string_view to_string(Layout layout);
DType parse_dtype(std::string_view text);    // throws kt::Error naming the accepted spellings
Layout parse_layout(std::string_view text);  // likewise

// The element type the kernel templates name for `dtype`: "kt::bf16", "kt::fp16", "float".
std::string_view device_type_name(DType dtype);

int size_bytes(DType dtype);
bool is_16bit(DType dtype);

}  // namespace kt
