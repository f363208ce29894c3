// The checks of `kerntune doctor`, one function per section (database, blocklist, toolkit,
// driver), each returning lines of a checklist: a verdict, what was found and what to do about
// it. A new section is one more function here and one more entry in cmd_doctor.cpp's list.
#pragma once

#include <string>
#include <vector>

namespace kt::cli {

enum class Verdict { kOk, kWarn, kFail };
const char* to_string(Verdict verdict);  // "OK", "WARN", "FAIL"

struct CheckLine {
  Verdict verdict = Verdict::kOk;
  std::string finding;  // what was checked and found
  std::string fix;      // what to do; empty for OK
};

struct Section {
  std::string name;   // "database", "blocklist", "toolkit", "driver"
  std::string title;  // e.g. "database /path/kerntune.db"
  std::vector<CheckLine> lines;
};

// What the machine offers, gathered once and shared by the sections.
struct MachineFacts {
  bool gpu = false;
  std::string no_gpu_reason;
  std::string driver_path;
  int driver_version = 0;                        // e.g. 13000; 0 without a driver
  std::vector<std::string> device_fingerprints;  // one per visible device
  std::string nvrtc_version;                     // empty when NVRTC is not loadable
  std::string nvrtc_path;
  std::string nvrtc_error;  // why not, when not
};

// Loads the driver and NVRTC where they exist; never throws.
MachineFacts gather_machine_facts();

// The database at `path`, opened read-only: integrity, schema version and application id,
// stale rows against this machine.
Section check_database(const std::string& path, const MachineFacts& machine);
// The blocklist of the database at `path`: entries that apply on this machine, entries of other
// devices, and stale ones (recorded under another NVRTC or template version, so their compile
// keys can no longer occur). No lines when the file cannot be read (check_database says why).
Section check_blocklist(const std::string& path, const MachineFacts& machine);
// NVRTC and the CUDA headers.
Section check_toolkit(const MachineFacts& machine);
// libcuda, its version and the devices.
Section check_driver(const MachineFacts& machine);

}  // namespace kt::cli
