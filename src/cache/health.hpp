// What `kerntune doctor` needs to know about a database file, read without writing anything:
// whether it opens as a kerntune database (and if not, why), SQLite's full integrity check, its
// schema version and application id, and how many rows are stale for this machine.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cache/database.hpp"

namespace kt::cache {

// What "current" means on this machine; an empty field is not checked.
struct HealthExpectations {
  int protocol_version = 0;
  // Each op's problem-key prefix ("gemm:") and its current template version (the registry's).
  std::vector<std::pair<std::string, int>> template_versions;
  std::vector<std::string> device_fingerprints;  // the visible GPUs; empty: no GPU to compare
  std::string nvrtc_version;                     // the loaded NVRTC; empty: none loaded
};

// Rows no lookup on this machine will use.
struct StaleRows {
  std::int64_t old_version_winners = 0;  // protocol or template version below the current one
  std::int64_t old_version_measurements = 0;
  std::int64_t other_device_winners = 0;  // fingerprint of no visible GPU
  std::int64_t other_device_measurements = 0;
  std::vector<std::string> other_devices;  // their distinct fingerprints
  // Compiled by another NVRTC and stored without a source key (before schema version 4): their
  // compile keys never match.
  std::int64_t other_nvrtc_cubins = 0;
  std::vector<std::string> other_nvrtc_versions;
};

struct DatabaseHealth {
  bool exists = false;
  // Empty when the file opens as a kerntune database this build can read; else the reason and
  // the fix, as Database::open would say it.
  std::string problem;
  std::vector<std::string> integrity_problems;  // PRAGMA integrity_check (the first 10)
  std::int64_t application_id = 0;
  int schema_version = 0;  // of a readable file
  Summary summary;         // of a readable file
  StaleRows stale;         // of a readable file
  InvalidRows invalid;     // of a readable file of the current schema
};

// Opens `path` read-only (never creating or migrating it) and reports on it. Never throws for a
// bad file: everything wrong with it is in the result.
DatabaseHealth check_database_health(const std::string& path, const HealthExpectations& expected);

}  // namespace kt::cache
