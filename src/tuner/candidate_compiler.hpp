// Compiling candidates for a tuning run, crash-isolated: a candidate's cubin comes from the
// database when its compile key is there, else from a compile worker process (a pool, one per
// compile thread), and is written back. A worker that dies makes the candidate compile_crash,
// one that runs past the time limit makes it timeout; either way the worker is started afresh
// for the next candidate. Kernels blocklisted for a fault on the device are not compiled at all
// (entries that host-side failures made before issue 35 are ignored: cache::is_device_fault).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "generator/generated_source.hpp"
#include "tuner/test_faults.hpp"
#include "tuner/worker_process.hpp"

namespace kt::tune {

struct CompileOutcome {
  cache::Status status = cache::Status::kOk;
  std::string detail;
  std::optional<cache::CubinRecord> record;  // kOk
  bool from_cache = false;
  std::string compile_key;   // always set
  std::string kernel;        // the main kernel's name expression
  bool worker_died = false;  // the candidate cost a compile worker
  bool speculative = false;  // compiled ahead of its round (CandidatePipeline::compile)
};

struct CompileSettings {
  std::string device_fingerprint;  // whose blocklist applies
  double timeout_s = 600;          // per candidate, NVRTC and ptxas together
  bool retry_blocklisted = false;  // compile and measure blocklisted kernels anyway
  TestFaults faults;               // test only
};

class CandidateCompiler {
 public:
  CandidateCompiler(cache::Database& db, CompileSettings settings);

  // Thread-safe. Applies the candidate's test fault to `source`, then: blocklisted for a device
  // fault → kRejected ("blocklisted: <reason>"); in the database → its cubin; else compiled in
  // a worker. Throws kt::Error when NVRTC is missing altogether (kNotFound) or the worker cannot
  // start (WorkerProcess::request): no candidate's fault, so no candidate's outcome.
  CompileOutcome compile(const std::string& config_key, gen::GeneratedSource source);

  int num_worker_restarts() const { return restarts_; }

 private:
  std::unique_ptr<WorkerProcess> acquire();
  void release(std::unique_ptr<WorkerProcess> worker);

  cache::Database& db_;
  CompileSettings settings_;
  std::mutex mutex_;  // guards idle_
  std::vector<std::unique_ptr<WorkerProcess>> idle_;
  std::atomic<int> restarts_{0};
};

}  // namespace kt::tune
