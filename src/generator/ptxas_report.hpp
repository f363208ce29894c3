// Parses the ptxas report NVRTC leaves in the program log (--ptxas-options=-v): resources per
// entry function, and the wgmma-serialization warnings (C75xx) that silently cost speed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kt::gen {

struct KernelResources {
  std::string function;  // mangled entry name
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int smem_static_bytes = 0;
};

struct PtxasReport {
  std::vector<KernelResources> kernels;
  std::vector<std::string> performance_warnings;  // lines mentioning C75xx

  const KernelResources* find(std::string_view function) const;
  int total_spill_bytes() const;
};

PtxasReport parse_ptxas_report(std::string_view log);

}  // namespace kt::gen
