// Shards (or other bundles) merged into one bundle: the SQLite database a fleet ships, with a
// provenance table and a content hash, self-contained (no -wal beside it). Every input is checked
// before anything is written: each must be of this kerntune's schema and hold winners of this
// kerntune's benchmark protocol and template versions, and with manifests given, every item of
// each must have a winner in some input. The merge is written to a temporary file renamed over
// the bundle at the end, so a refused or failed merge leaves the bundle and every input as they
// were. Merging the same inputs again changes nothing (the same content hash).
#pragma once

#include <string>
#include <vector>

#include "core/manifest.hpp"

namespace kt::fleet {

struct MergeOptions {
  std::vector<std::string> inputs;  // shard databases or bundles, read-only
  std::string out;                  // the bundle: created, or merged into when it exists
  std::vector<Manifest> manifests;  // optional: what the bundle must answer in full
  bool allow_incomplete = false;    // merge even when items of the manifests have no winner
};

struct MergeReport {
  std::string out;
  std::int64_t rows_added = 0;  // cubins, measurements and winners new to the bundle
  std::int64_t num_winners = 0;
  std::int64_t num_measured = 0;
  std::int64_t num_predicted = 0;
  std::string content_sha256;
  bool changed = false;                   // the content differs from the bundle's before
  std::vector<std::string> missing;       // items without a winner (allow_incomplete)
  std::vector<std::string> skipped_rows;  // rows an input held that failed their checks
};

// Throws kt::Error (kDatabase) naming every input (and the bundle) of another schema, protocol
// or template version, with the versions, and (kNotFound) naming the missing items; nothing is
// written then.
MergeReport merge_bundle(const MergeOptions& options);

}  // namespace kt::fleet
