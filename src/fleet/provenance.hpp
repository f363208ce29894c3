// What a fleet shard's database or a bundle says about itself, kept in its provenance table: the
// kerntune and the protocol and template versions that tuned it, the NVRTC and driver versions,
// the devices (fingerprint with SM count, clock, driver, measured or predicted), the manifests it
// answers, its winners' counts, when it was made and the hash of its content.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "core/device_desc.hpp"

namespace kt::fleet {

struct Provenance {
  std::string role;   // "shard" or "bundle"; "" for a database no fleet command made
  std::string shard;  // "2/4" for a shard
  std::string kerntune_version;
  int protocol_version = 0;
  std::map<std::string, int> template_versions;  // op name -> template version
  std::vector<std::string> nvrtc_versions;
  std::vector<std::string> driver_versions;
  std::vector<std::string> devices;    // device_record lines, sorted
  std::vector<std::string> manifests;  // the SHA-256 of each manifest, sorted
  std::int64_t num_measured = 0;       // winners measured on a GPU
  std::int64_t num_predicted = 0;      // winners the model picked without one
  std::int64_t created_unix = 0;
  std::string content_sha256;  // cache::Database::content_sha256 when it was written
};

// This build's part: kerntune version, benchmark protocol, every registered op's template
// version; `role` as given; the time now.
Provenance this_build(const std::string& role);

// "NVIDIA H200/cc90/132sm clock_mhz=1980 driver=13000 measured" (driver 0 is left out: a
// profile predicted for).
std::string device_record(const DeviceDesc& device, bool measured);

// "attention=6 gemm=15 rmsnorm=2".
std::string template_versions_text(const std::map<std::string, int>& versions);

// The database's provenance rows read as a Provenance (role "" when there are none). Throws
// kt::Error (kDatabase) naming the row for a number that does not parse.
Provenance read_provenance(const cache::Database& db);
// Replaces the database's provenance rows with `p`.
void write_provenance(cache::Database& db, const Provenance& p);
// Sets `p`'s counts of measured and predicted winners, NVRTC versions and content hash from the
// database's rows as they are now.
void count_content(const cache::Database& db, Provenance& p);

// The sorted union of `a` and `b`.
std::vector<std::string> merged(std::vector<std::string> a, const std::vector<std::string>& b);

}  // namespace kt::fleet
