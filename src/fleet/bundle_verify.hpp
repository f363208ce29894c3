// A bundle checked before it ships (or where it lands): the file is whole (SQLite's integrity
// check, no row that import or merge would refuse), its content hash is the one its provenance
// recorded, and every winner is served: its op and versions are this kerntune's, its config is
// valid on its device, and a cubin of every variant is stored, found by source key (as a machine
// without NVRTC finds it) and passing the cubin checks; on a GPU, every such cubin built for this
// GPU's architecture is loaded by the driver, and a sample of the winners measured on this GPU is
// timed again (bundle_remeasure.hpp). Reads only.
#pragma once

#include <string>
#include <vector>

#include "fleet/bundle_remeasure.hpp"

namespace kt::fleet {

struct VerifyReport {
  std::string path;
  std::string role;            // the provenance's ("" when there is none)
  std::string content_sha256;  // as computed now
  int num_winners = 0;
  int num_cubins_checked = 0;          // (winner, variant) cubins found and checked
  int num_cubins_loaded = 0;           // of those, loaded on this GPU
  std::string gpu;                     // the GPU loaded on ("" without one)
  std::vector<Remeasured> remeasured;  // the sample timed again on this GPU
  std::vector<std::string> failures;   // each a line: what is wrong and where
  std::vector<std::string> notes;      // what was not checked, and why
  bool ok() const { return failures.empty(); }
};

// Throws kt::Error only when the file cannot be opened as a database of this schema (missing,
// damaged, truncated, foreign, older or newer); everything else is in the report.
VerifyReport verify_bundle(const std::string& path, const RemeasureOptions& remeasure = {});

}  // namespace kt::fleet
