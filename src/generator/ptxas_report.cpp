// ptxas -v log parsing. The format is stable across CUDA 11-13:
//   ptxas info    : Compiling entry function '_Z...' for 'sm_90a'
//   ptxas info    : Function properties for _Z...
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 168 registers, used 1 barriers, 384 bytes smem, 400 bytes cmem[0]
#include "generator/ptxas_report.hpp"

#include <regex>

#include "core/text.hpp"

namespace kt::gen {

const KernelResources* PtxasReport::find(std::string_view function) const {
  for (const auto& k : kernels)
    if (k.function == function) return &k;
  return nullptr;
}

int PtxasReport::total_spill_bytes() const {
  int total = 0;
  for (const auto& k : kernels) total += k.spill_store_bytes + k.spill_load_bytes;
  return total;
}

PtxasReport parse_ptxas_report(std::string_view log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kFrame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kUsed(R"(Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kSerialization(R"(C75\d\d)");

  PtxasReport report;
  KernelResources* current = nullptr;
  auto select = [&](const std::string& name) {
    for (auto& k : report.kernels)
      if (k.function == name) return &k;
    report.kernels.push_back(KernelResources{name});
    return &report.kernels.back();
  };
  for (std::string_view line_view : split(log, '\n')) {
    const std::string line(line_view);
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      current = select(m[1]);
    } else if (std::regex_search(line, m, kProperties)) {
      current = select(m[1]);
    } else if (current != nullptr && std::regex_search(line, m, kFrame)) {
      current->stack_frame_bytes = std::stoi(m[1]);
      current->spill_store_bytes = std::stoi(m[2]);
      current->spill_load_bytes = std::stoi(m[3]);
    } else if (current != nullptr && std::regex_search(line, m, kUsed)) {
      current->registers = std::stoi(m[1]);
      if (std::regex_search(line, m, kSmem)) current->smem_static_bytes = std::stoi(m[1]);
    }
    if (std::regex_search(line, kSerialization)) report.performance_warnings.push_back(line);
  }
  return report;
}

}  // namespace kt::gen
