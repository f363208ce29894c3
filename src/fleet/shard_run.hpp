// One shard of a manifest tuned into its database: its items shared out over one tuning worker
// per listed GPU (each measuring on its own device, in its own benchmark worker process), an item
// whose target is not a listed GPU (or every item, without a GPU or with predict) predicted for
// its target's profile; finished items skipped and a killed item resumed, so the same command
// continues a shard that was stopped at any moment; the winners' cubins for every variant of the
// op stored beside them, so the bundle serves without NVRTC; the shard's provenance kept current.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "fleet/work_plan.hpp"
#include "tuner/candidate_pipeline.hpp"

namespace kt::fleet {

struct ShardRunOptions {
  Manifest manifest;
  Shard shard;
  std::string db_path;
  // GPU ordinals, one tuning worker each (an ordinal may repeat: two workers share that GPU);
  // empty: {0}. Without a GPU, or with `predict`, the workers predict.
  std::vector<int> devices;
  bool predict = false;
  tune::IsolationOptions isolation;
};

// One item's news, for the caller's progress lines. Counts and the ETA are the shard's after it.
struct ItemEvent {
  enum class Kind { kStarted, kSkipped, kTuned, kFailed };
  Kind kind = Kind::kStarted;
  WorkItem item;
  int worker = 0;          // which tuning worker (its index in the device list)
  bool measured = false;   // tuned (or to be tuned) on a GPU, not predicted
  std::string config_key;  // the winner (skipped, tuned)
  double winner_us = 0;    // its time, measured or predicted
  bool resumed = false;    // a killed run of this item was continued
  std::string error;       // kFailed: why
  double item_s = 0;       // kTuned: seconds this item took
  int done = 0;            // items finished (skipped, tuned or failed) so far
  int total = 0;           // items in the shard
  double eta_s = -1;       // seconds left at the rate so far over the workers; -1: unknown
};
using ItemEventFn = std::function<void(const ItemEvent&)>;

struct ShardRunReport {
  int total = 0;
  int skipped = 0;
  int tuned = 0;
  int measured = 0;  // of the tuned
  int failed = 0;
  std::vector<std::string> failures;  // "<problem> on <device>: <reason>"
  std::string no_gpu_reason;          // why nothing was measured ("" when a GPU was used)
};

// Runs the shard. `on_event` (may be empty) is called from the workers' threads, one call at a
// time. Throws kt::Error for what stops the whole shard (the database, a device that cannot be
// opened); an item that fails is reported and the others go on.
ShardRunReport run_shard(const ShardRunOptions& options, const ItemEventFn& on_event);

}  // namespace kt::fleet
