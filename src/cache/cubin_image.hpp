// A structural check of a cubin before its bytes go to cuModuleLoadData, which takes no length
// and trusts the ELF headers it reads: every header, table and string read here lies inside the
// blob, and the kernels the caller will look up are function symbols of the image; and the
// expression a lowered kernel name stands for.
#pragma once

#include <string>
#include <vector>

namespace kt::cache {

// The reason `bytes` is not a cubin that holds every name of `kernels` as a function symbol, or
// "" when it is: a 64-bit little-endian ELF for the CUDA machine (EM_CUDA), whose section and
// program header tables and every section's bytes (but SHT_NOBITS) lie inside `bytes`, with a
// symbol table whose names lie inside its string table. Never reads outside `bytes`.
std::string cubin_image_problem(const std::vector<char>& bytes,
                                const std::vector<std::string>& kernels);

// The name expression a lowered (mangled) kernel name stands for: its demangled name without
// the return type and parameter list, e.g. "_ZN2kt4kernILi128EEEvPf" -> "kt::kern<128>"; "" when
// it does not demangle. NVRTC's lowered name of expression E demangles to E itself.
std::string demangled_expression(const std::string& lowered);

}  // namespace kt::cache
