// Talking to the benchmark worker.
#include "tuner/bench_worker.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/log.hpp"
#include "tuner/gpu_turn.hpp"
#include "tuner/lost_worker.hpp"
#include "tuner/worker_messages.hpp"

namespace kt::tune {

namespace {

// Creating a context, drawing inputs, the reference, and compiling the check kernels on a
// cold cache take seconds; far less than this.
constexpr double kSetupTimeoutS = 600;
// A candidate may take this many times its predicted time before it counts as hung.
constexpr double kDeadlineFactor = 50;

}  // namespace

BenchWorker::BenchWorker(BenchSetup setup, double candidate_timeout_s)
    : setup_(std::move(setup)), timeout_s_(candidate_timeout_s) {}

double BenchWorker::deadline_s(double predicted_us, int launches) const {
  return std::max(timeout_s_, kDeadlineFactor * predicted_us * 1e-6 * launches);
}

void BenchWorker::ensure_setup() {
  if (process_.running() && set_up_start_ == process_.num_starts()) return;
  Message request;
  request.set("op", "setup")
      .set("problem", setup_.problem_key)
      .set("device", setup_.device_ordinal)
      .set("seed", std::int64_t(setup_.seed))
      .set("workspace_bytes", std::int64_t(setup_.workspace_bytes))
      .set("db", setup_.db_path);
  put_bench_options(request, setup_.bench);
  const WorkerReply reply = process_.request(request, kSetupTimeoutS);
  if (reply.kind != WorkerReply::Kind::kReply)
    throw Error(ErrorKind::kCuda,
                fmt::format("the benchmark worker could not set up {} on device {}: {}; run "
                            "`kerntune info` to check the GPU",
                            setup_.problem_key, setup_.device_ordinal, reply.death));
  if (reply.message.get("status") != "ok")
    throw Error(ErrorKind::kCuda, fmt::format("the benchmark worker could not set up {}: {}",
                                              setup_.problem_key, reply.message.get("detail")));
  set_up_start_ = process_.num_starts();
}

void BenchWorker::prepare() {
  const std::unique_lock turn = take_gpu_turn(setup_.device_ordinal);
  ensure_setup();
}

TrialOutcome BenchWorker::measure(const std::string& config_key, const cache::CubinRecord& cubin,
                                  double predicted_us, double stop_above_us) {
  const std::unique_lock turn = take_gpu_turn(setup_.device_ordinal);
  ensure_setup();
  Message request;
  request.set("op", "measure").set("config", config_key).set("stop_above_us", stop_above_us);
  put_record(request, "cubin.", cubin);
  const BenchmarkOptions& b = setup_.bench;
  const int launches = b.warmup + std::max(b.max_reps, b.probe_reps) + 4;
  const double deadline = deadline_s(predicted_us, launches) + kDeadlineFactor * b.warmup_ms * 1e-3;
  const WorkerReply reply = process_.request(request, deadline);
  TrialOutcome out;
  if (reply.kind != WorkerReply::Kind::kReply) {
    ++restarts_;
    record_lost_worker(out, reply, "benchmark worker", cache::Status::kLaunchFailure, config_key);
    return out;
  }
  out.status = cache::parse_status(reply.message.get("status"));
  out.detail = reply.message.get("detail");
  out.timing = get_timing(reply.message, "timing.");
  if (reply.message.get_int("exiting") != 0) {
    process_.reap();
    ++restarts_;
    out.worker_died = true;
  }
  return out;
}

bool BenchWorker::remeasure(const std::vector<std::string>& config_keys,
                            const std::vector<const cache::CubinRecord*>& cubins,
                            const std::vector<double>& predicted_us, std::vector<Timing*>& timings,
                            int rounds) {
  const std::unique_lock turn = take_gpu_turn(setup_.device_ordinal);
  ensure_setup();
  Message request;
  request.set("op", "remeasure").set("count", int(config_keys.size())).set("rounds", rounds);
  double deadline = 0;
  for (std::size_t i = 0; i < config_keys.size(); ++i) {
    const std::string prefix = fmt::format("{}.", i);
    request.set(prefix + "config", config_keys[i]);
    put_record(request, prefix + "cubin.", *cubins[i]);
    put_timing(request, prefix + "timing.", *timings[i]);
    deadline +=
        deadline_s(predicted_us[i], timings[i]->num_reps + kMinFinalistRepsPerRound * rounds + 1);
  }
  const WorkerReply reply = process_.request(request, deadline);
  if (reply.kind != WorkerReply::Kind::kReply || reply.message.get("status") != "ok") {
    const std::string why =
        reply.kind == WorkerReply::Kind::kReply ? reply.message.get("detail") : reply.death;
    if (reply.kind != WorkerReply::Kind::kReply) ++restarts_;
    logger().warn("finalist re-measure failed; keeping first-pass timings detail=\"{}\"", why);
    if (reply.kind == WorkerReply::Kind::kReply && reply.message.get_int("exiting") != 0)
      process_.reap();
    return false;
  }
  for (std::size_t i = 0; i < config_keys.size(); ++i)
    *timings[i] = get_timing(reply.message, fmt::format("{}.timing.", i));
  return true;
}

}  // namespace kt::tune
