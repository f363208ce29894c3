// A minimal cubin-shaped ELF for the tests that need no toolkit: a 64-bit little-endian ELF for
// EM_CUDA with a string table and a symbol table holding one function symbol per kernel name,
// which cache::cubin_image_problem accepts. Not loadable by a driver.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cache/cubin_image.hpp"
#include "cache/database.hpp"
#include "core/sha256.hpp"

namespace kt::testing {

namespace tiny_cubin_detail {
template <typename T>
void put(std::vector<char>& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}
}  // namespace tiny_cubin_detail

// ELF header, then .strtab, then .symtab (a null symbol and one FUNC symbol per kernel), then
// `padding` bytes of 0x5a, then the section header table (null, .strtab, .symtab).
inline std::vector<char> tiny_cubin(const std::vector<std::string>& kernels,
                                    std::size_t padding = 0) {
  using tiny_cubin_detail::put;
  std::string strings(1, '\0');
  std::vector<std::uint32_t> names;
  for (const std::string& kernel : kernels) {
    names.push_back(static_cast<std::uint32_t>(strings.size()));
    strings += kernel;
    strings += '\0';
  }
  const std::size_t strtab = 64;
  const std::size_t symtab = strtab + strings.size();
  const std::size_t symtab_bytes = 24 * (kernels.size() + 1);
  const std::size_t shoff = symtab + symtab_bytes + padding;
  std::vector<char> bytes(shoff + 3 * 64, '\0');
  std::memcpy(bytes.data(),
              "\x7f"
              "ELF\x02\x01\x01",
              7);
  put<std::uint16_t>(bytes, 16, 2);    // ET_EXEC
  put<std::uint16_t>(bytes, 18, 190);  // EM_CUDA
  put<std::uint32_t>(bytes, 20, 1);
  put<std::uint64_t>(bytes, 40, shoff);
  put<std::uint16_t>(bytes, 52, 64);
  put<std::uint16_t>(bytes, 58, 64);
  put<std::uint16_t>(bytes, 60, 3);
  std::memcpy(bytes.data() + strtab, strings.data(), strings.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::size_t at = symtab + 24 * (i + 1);
    put<std::uint32_t>(bytes, at, names[i]);
    put<std::uint8_t>(bytes, at + 4, 0x12);  // STB_GLOBAL, STT_FUNC
  }
  for (std::size_t i = 0; i < padding; ++i) bytes[symtab + symtab_bytes + i] = 0x5a;
  // Section 1: .strtab (SHT_STRTAB); section 2: .symtab (SHT_SYMTAB, linked to 1).
  put<std::uint32_t>(bytes, shoff + 64 + 4, 3);
  put<std::uint64_t>(bytes, shoff + 64 + 24, strtab);
  put<std::uint64_t>(bytes, shoff + 64 + 32, strings.size());
  put<std::uint32_t>(bytes, shoff + 128 + 4, 2);
  put<std::uint64_t>(bytes, shoff + 128 + 24, symtab);
  put<std::uint64_t>(bytes, shoff + 128 + 32, symtab_bytes);
  put<std::uint32_t>(bytes, shoff + 128 + 40, 1);
  put<std::uint64_t>(bytes, shoff + 128 + 56, 24);
  return bytes;
}

// A compile key of 64 hex digits derived from `name`.
inline std::string hex_key(const std::string& name) { return sha256_hex(name); }

// A cubin record that passes cache::cubin_problem: `kernels` (mangled names) as lowered names,
// what they demangle to as name expressions, a tiny_cubin of them, and the hash of its bytes.
inline cache::CubinRecord tiny_cubin_record(const std::string& compile_key,
                                            const std::vector<std::string>& kernels = {"_Z1kv"},
                                            std::size_t padding = 0) {
  cache::CubinRecord r;
  r.compile_key = compile_key;
  r.arch = "sm_90a";
  r.source_name = "tiny";
  for (const std::string& kernel : kernels)
    r.name_expressions.push_back(cache::demangled_expression(kernel));
  r.lowered_names = kernels;
  r.cubin = tiny_cubin(kernels, padding);
  r.cubin_sha256 = sha256_hex(std::string_view(r.cubin.data(), r.cubin.size()));
  return r;
}

}  // namespace kt::testing
