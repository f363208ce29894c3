// The cubin check: ELF64 headers, section and program header tables, the symbol table and its
// strings, each bounds-checked against the blob before it is read.
#include "cache/cubin_image.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>

#include "cache/row_checks.hpp"

namespace kt::cache {

namespace {

constexpr std::uint16_t kMachineCuda = 190;  // EM_CUDA
constexpr std::size_t kElfHeaderBytes = 64;
constexpr std::size_t kSectionHeaderBytes = 64;
constexpr std::size_t kProgramHeaderBytes = 56;
constexpr std::size_t kSymbolBytes = 24;
constexpr std::uint32_t kSectionSymtab = 2;
constexpr std::uint32_t kSectionStrtab = 3;
constexpr std::uint32_t kSectionNobits = 8;
constexpr unsigned kSymbolFunction = 2;  // STT_FUNC

// Little-endian fields at byte offsets of a blob whose bounds the caller has checked.
class Bytes {
 public:
  explicit Bytes(const std::vector<char>& bytes) : data_(bytes.data()), size_(bytes.size()) {}
  std::size_t size() const { return size_; }
  // True when [offset, offset + length) lies inside the blob (without overflow).
  bool holds(std::uint64_t offset, std::uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }
  template <typename T>
  T read(std::uint64_t offset) const {
    T value;
    std::memcpy(&value, data_ + offset, sizeof(T));
    return value;
  }
  const char* at(std::uint64_t offset) const { return data_ + offset; }

 private:
  const char* data_;
  std::size_t size_;
};

struct Section {
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
};

}  // namespace

std::string cubin_image_problem(const std::vector<char>& blob,
                                const std::vector<std::string>& kernels) {
  static_assert(std::endian::native == std::endian::little, "cubins are little-endian ELF");
  const Bytes bytes(blob);
  if (!bytes.holds(0, kElfHeaderBytes))
    return fmt::format("{} bytes is shorter than an ELF header ({} bytes)", blob.size(),
                       kElfHeaderBytes);
  if (std::memcmp(bytes.at(0),
                  "\x7f"
                  "ELF",
                  4) != 0)
    return "it does not start with the ELF magic";
  if (bytes.read<std::uint8_t>(4) != 2 || bytes.read<std::uint8_t>(5) != 1)
    return "it is not a 64-bit little-endian ELF file";
  if (bytes.read<std::uint16_t>(18) != kMachineCuda)
    return fmt::format("its ELF machine is {}, not CUDA ({})", bytes.read<std::uint16_t>(18),
                       kMachineCuda);
  const auto phoff = bytes.read<std::uint64_t>(32);
  const auto shoff = bytes.read<std::uint64_t>(40);
  const auto phentsize = bytes.read<std::uint16_t>(54);
  const auto phnum = bytes.read<std::uint16_t>(56);
  const auto shentsize = bytes.read<std::uint16_t>(58);
  const auto shnum = bytes.read<std::uint16_t>(60);
  if (shnum == 0 || shentsize != kSectionHeaderBytes)
    return "its section header table is missing or has entries of the wrong size";
  if (!bytes.holds(shoff, std::uint64_t{shnum} * kSectionHeaderBytes))
    return "its section header table lies outside the file";
  if (phnum != 0) {
    if (phentsize != kProgramHeaderBytes)
      return "its program header table has entries of the wrong size";
    if (!bytes.holds(phoff, std::uint64_t{phnum} * kProgramHeaderBytes))
      return "its program header table lies outside the file";
    for (std::uint16_t i = 0; i < phnum; ++i) {
      const std::uint64_t at = phoff + std::uint64_t{i} * kProgramHeaderBytes;
      if (!bytes.holds(bytes.read<std::uint64_t>(at + 8), bytes.read<std::uint64_t>(at + 32)))
        return fmt::format("program segment {} lies outside the file", i);
    }
  }
  std::vector<Section> sections(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t at = shoff + std::uint64_t{i} * kSectionHeaderBytes;
    Section& s = sections[i];
    s.type = bytes.read<std::uint32_t>(at + 4);
    s.offset = bytes.read<std::uint64_t>(at + 24);
    s.size = bytes.read<std::uint64_t>(at + 32);
    s.link = bytes.read<std::uint32_t>(at + 40);
    if (s.type != kSectionNobits && !bytes.holds(s.offset, s.size))
      return fmt::format("section {} lies outside the file", i);
  }
  std::set<std::string_view> functions;
  bool has_symtab = false;
  for (const Section& s : sections) {
    if (s.type != kSectionSymtab) continue;
    has_symtab = true;
    if (s.link >= sections.size() || sections[s.link].type != kSectionStrtab)
      return "its symbol table links to no string table";
    const Section& strings = sections[s.link];
    for (std::uint64_t at = s.offset; at + kSymbolBytes <= s.offset + s.size; at += kSymbolBytes) {
      const auto name = bytes.read<std::uint32_t>(at);
      if ((bytes.read<std::uint8_t>(at + 4) & 0xf) != kSymbolFunction) continue;
      if (name >= strings.size) return "a symbol's name lies outside its string table";
      const char* first = bytes.at(strings.offset + name);
      const void* end = std::memchr(first, '\0', strings.size - name);
      if (end == nullptr) return "a symbol's name runs past its string table";
      functions.emplace(first, static_cast<const char*>(end) - first);
    }
  }
  if (!has_symtab) return "it has no symbol table";
  for (const std::string& kernel : kernels) {
    if (!functions.contains(kernel))
      return fmt::format("it holds no kernel named '{}'", printable(kernel));
  }
  return "";
}

std::string demangled_expression(const std::string& lowered) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(lowered.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || demangled == nullptr) return "";
  std::string_view name(demangled.get());
  // A function template's demangled name starts with its return type; kernels return void.
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0) return std::string(name.substr(0, i));
  }
  return "";
}

}  // namespace kt::cache
