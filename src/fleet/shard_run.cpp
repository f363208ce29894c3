// A shard's run (shard_run.hpp): a queue of its items, one thread per tuning worker.
#include "fleet/shard_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

#include "cache/row_checks.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/op_registry.hpp"
#include "fleet/provenance.hpp"
#include "generator/generated_source.hpp"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "tuner/problem_tuner.hpp"

namespace kt::fleet {

namespace {

using Clock = std::chrono::steady_clock;

// The shared state of the workers: the next item, the counts, the caller's callback.
struct Progress {
  std::mutex mutex;
  std::size_t next = 0;
  ShardRunReport report;
  int done = 0;
  double tuned_s = 0;  // seconds of the tuned items, for the ETA
  int workers = 1;
};

// Every variant's cubin of a winner, compiled into `db` where missing, so that a runtime serves
// the item without NVRTC.
void store_variant_cubins(cache::Database& db, const WorkItem& item, const std::string& config) {
  const OpSpec& op = op_spec_for_key(item.problem_key);
  for (const std::string& variant : op.variants()) {
    const gen::GeneratedSource source =
        gen::generate(op, item.problem_key, config, variant, item.device.arch());
    if (!db.find_cubins_by_source(gen::source_key(source), source.arch).empty()) continue;
    rt::get_or_compile(&db, source, /*allow_compile=*/true, /*write_back=*/true);
  }
}

}  // namespace

ShardRunReport run_shard(const ShardRunOptions& o, const ItemEventFn& on_event) {
  const std::vector<WorkItem> items = shard_items(o.manifest, o.shard);
  std::vector<int> ordinals = o.devices.empty() ? std::vector<int>{0} : o.devices;

  // The GPUs measured on: each worker's, when there is a GPU and predicting was not asked for.
  std::vector<std::optional<DeviceDesc>> gpus(ordinals.size());
  std::string no_gpu_reason = o.predict ? "predicting (--predict)" : "";
  if (!o.predict && rt::gpu_available(&no_gpu_reason)) {
    for (std::size_t w = 0; w < ordinals.size(); ++w) {
      const rt::BoundContext context(ordinals[w]);
      gpus[w] = rt::query_device(context.device());
    }
  }

  cache::Database db = cache::Database::open(o.db_path);
  Provenance provenance = this_build("shard");
  provenance.shard = o.shard.text();
  provenance.manifests = {manifest_sha256(o.manifest)};
  for (const ManifestDevice& target : o.manifest.devices) {
    const DeviceDesc desc = target.desc();
    bool measured = false;
    for (const auto& gpu : gpus)
      if (gpu && gpu->fingerprint() == desc.fingerprint()) {
        measured = true;
        provenance.devices = merged(provenance.devices, {device_record(*gpu, true)});
        provenance.driver_versions =
            merged(provenance.driver_versions, {std::to_string(gpu->driver_version)});
      }
    if (!measured) provenance.devices = merged(provenance.devices, {device_record(desc, false)});
  }
  count_content(db, provenance);
  write_provenance(db, provenance);

  Progress progress;
  progress.report.total = int(items.size());
  progress.report.no_gpu_reason = no_gpu_reason;
  progress.workers = int(ordinals.size());
  const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
  const int compile_threads = std::max(1, hardware / int(ordinals.size()));

  auto emit = [&](ItemEvent event) {  // called with progress.mutex held
    event.done = progress.done;
    event.total = int(items.size());
    const int tuned = progress.report.tuned + progress.report.failed;
    if (tuned > 0)
      event.eta_s =
          progress.tuned_s / tuned * double(int(items.size()) - progress.done) / progress.workers;
    if (on_event) on_event(event);
  };

  auto work = [&](int worker) {
    cache::Database connection = cache::Database::open(o.db_path);
    const std::optional<DeviceDesc>& gpu = gpus[std::size_t(worker)];
    for (;;) {
      std::size_t index;
      {
        const std::lock_guard lock(progress.mutex);
        if (progress.next >= items.size()) return;
        index = progress.next++;
      }
      const WorkItem& item = items[index];
      const bool measure = gpu && gpu->fingerprint() == item.device.fingerprint();
      tune::TuneOptions options;
      options.max_candidates = o.manifest.tuning.candidates;
      options.finalists = o.manifest.tuning.finalists;
      options.predict_only = !measure;
      options.device = item.device;
      options.device_ordinal = ordinals[std::size_t(worker)];
      options.compile_threads = compile_threads;
      options.isolation = o.isolation;
      ItemEvent event;
      event.item = item;
      event.worker = worker;
      event.measured = measure;
      const auto start = Clock::now();
      try {
        if (auto finished = tune::find_finished(item.problem_key, connection, options)) {
          store_variant_cubins(connection, item, finished->winner.config_key);
          event.kind = ItemEvent::Kind::kSkipped;
          event.config_key = finished->winner.config_key;
          event.winner_us = finished->winner.median_us;
          const std::lock_guard lock(progress.mutex);
          ++progress.report.skipped;
          ++progress.done;
          emit(event);
          continue;
        }
        {
          const std::lock_guard lock(progress.mutex);
          ItemEvent started = event;
          started.kind = ItemEvent::Kind::kStarted;
          emit(started);
        }
        const tune::TuneReport report = tune::tune_problem(item.problem_key, connection, options);
        if (!report.winner)
          throw Error(ErrorKind::kUnsupported,
                      fmt::format("no candidate succeeded ({} tried)", report.candidates.size()));
        const tune::Candidate& winner = report.candidates[*report.winner];
        store_variant_cubins(connection, item, winner.config_key);
        event.kind = ItemEvent::Kind::kTuned;
        event.config_key = winner.config_key;
        event.winner_us = measure ? winner.timing.median_us : winner.predicted_us;
        event.resumed = report.resumed;
        event.item_s = std::chrono::duration<double>(Clock::now() - start).count();
        const std::lock_guard lock(progress.mutex);
        ++progress.report.tuned;
        progress.report.measured += measure;
        ++progress.done;
        progress.tuned_s += event.item_s;
        emit(event);
      } catch (const Error& e) {
        event.kind = ItemEvent::Kind::kFailed;
        event.error = e.what();
        event.item_s = std::chrono::duration<double>(Clock::now() - start).count();
        const std::lock_guard lock(progress.mutex);
        ++progress.report.failed;
        ++progress.done;
        progress.tuned_s += event.item_s;
        progress.report.failures.push_back(fmt::format("{} on {}: {}", item.problem_key,
                                                       item.device.fingerprint(),
                                                       cache::printable(e.what())));
        emit(event);
      }
    }
  };

  std::vector<std::thread> threads;
  std::exception_ptr failure;
  std::mutex failure_mutex;
  for (int w = 0; w < int(ordinals.size()); ++w)
    threads.emplace_back([&, w] {
      try {
        work(w);
      } catch (...) {  // the database or the device: the whole shard stops
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        const std::lock_guard stop(progress.mutex);
        progress.next = items.size();
      }
    });
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);

  count_content(db, provenance);
  write_provenance(db, provenance);
  logger().info("fleet shard {} done db={} items={} tuned={} skipped={} failed={}", o.shard.text(),
                o.db_path, items.size(), progress.report.tuned, progress.report.skipped,
                progress.report.failed);
  return progress.report;
}

}  // namespace kt::fleet
