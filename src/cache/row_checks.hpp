// What a row must be before kerntune stores or uses it: keys that parse for their op, a config
// that parses for that op, times finite and positive where they are times, a cubin whose bytes
// match their hash. Import and merge skip what fails; the runtime refuses such a cubin.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/database.hpp"

namespace kt::cache {

// The reason `m` cannot be stored, or "" when it can: the problem key must parse (gemm: or
// attn:), the config key must parse for that op, the device be non-empty, the versions positive;
// an ok or predicted row's median_us must be finite and positive, a failure's NaN or finite and
// not negative; predicted_us NaN or finite and not negative; counts not negative.
std::string measurement_problem(const Measurement& m);

// The reason `w` cannot be stored, or "": keys as for a measurement, median_us finite and
// positive.
std::string winner_problem(const Winner& w);

// The reason `r` cannot be stored or loaded, or "": a compile key of 64 lowercase hex digits, a
// source key empty or of 64 lowercase hex digits, name lists of equal length without empty or
// multi-line names, each lowered name the mangled form of its name expression
// (demangled_expression), cubin_sha256 equal to the SHA-256 of the bytes, and bytes that pass
// cubin_image_problem() with every lowered name a kernel.
std::string cubin_problem(const CubinRecord& r);

// The hex SHA-256 of a cubin's bytes (CubinRecord::cubin_sha256).
std::string cubin_sha256(const std::vector<char>& bytes);

// `text` with every control character (below 0x20 but tab, 0x7f, the C1 controls U+0080..U+009F)
// and every byte that is not part of well-formed UTF-8 written as \xNN, so that text read from a
// database cannot drive the terminal it is printed to.
std::string printable(std::string_view text);

}  // namespace kt::cache
