// kt::Runtime: the embeddable dispatcher, one path for every op. A hit is a shared-lock hash
// lookup and a launch; a miss takes the best of the dispatch grades' choices (op_dispatch.hpp)
// whose cubin is stored (found without NVRTC) or can be compiled, loads it through the op's
// launcher and keeps it; record mode appends a problem served without an exact entry, and
// benchmark mode times the chain's first configs on such a problem's first call.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/op_registry.hpp"
#include "generator/generated_source.hpp"
#include "generator/nvrtc_library.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/benchmark_timing.hpp"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/device_query.hpp"
#include "runtime/op_dispatch.hpp"
#include "runtime/op_launcher.hpp"
#include "runtime/problem_recorder.hpp"

namespace kt {

namespace {

// The model's picks tried when its first choice spills registers (the model cannot see spills).
constexpr std::size_t kModelDefaultTries = 4;
// Benchmark mode: timed launches of each candidate (after one untimed), their median kept.
constexpr int kBenchmarkRounds = 5;

struct Entry {
  const OpEntry* op = nullptr;
  std::unique_ptr<rt::OpKernel> kernel;
  DispatchInfo info;
  CUdeviceptr workspace = 0;  // the runtime's shared one, or a scratch buffer (scratch_of)
};

}  // namespace

struct Runtime::Impl {
  RuntimeOptions options;
  rt::BoundContext context;
  DeviceDesc device;
  std::optional<cache::Database> db;
  rt::ModuleCache modules;
  CUdeviceptr workspace = 0;
  // Scratch buffers of the problems whose op declares scratch they cannot run without
  // (OpSpec::required_workspace_bytes), largest last; kept for the runtime's life, since kernels
  // in flight and captured graphs hold their addresses.
  std::vector<std::pair<CUdeviceptr, std::size_t>> scratch_buffers;
  std::shared_mutex mutex;
  std::unordered_map<std::string, Entry> entries;  // by problem key + '#' + variant
  std::optional<rt::ProblemRecorder> recorder;     // record mode
  bool warned_record_failure = false;
  int benchmark_candidates = 0;  // benchmark mode: configs timed on a first call (0, 1: off)
  RuntimeStats stats;            // guarded by `mutex` (written under the unique lock of resolve)

  explicit Impl(const RuntimeOptions& o) : options(o), context(o.device_ordinal) {
    device = rt::query_device(context.device());
    gen::embedded_templates_sha256();  // taken here, not by the first dispatch (source keys)
    if (options.record_path.empty()) options.record_path = env::record_path().value_or("");
    if (!options.record_path.empty()) recorder.emplace(options.record_path);
    benchmark_candidates = options.benchmark_candidates >= 0
                               ? options.benchmark_candidates
                               : env::benchmark_candidates().value_or(0);
    if (benchmark_candidates > env::kMaxBenchmarkCandidates)
      throw_invalid(fmt::format("RuntimeOptions::benchmark_candidates = {}: at most {} configs",
                                benchmark_candidates, env::kMaxBenchmarkCandidates));
    const std::string path =
        options.database_path.empty() ? cache::default_database_path() : options.database_path;
    if (options.read_only) {
      if (std::filesystem::exists(path))
        db = cache::Database::open_readonly(path);
      else
        logger().warn("database {} does not exist; dispatching from the model", path);
    } else {
      db = cache::Database::open(path);
    }
    if (options.workspace_bytes > 0) {
      rt::check(rt::driver().mem_alloc(&workspace, options.workspace_bytes),
                "cuMemAlloc(workspace)");
      for (const OpEntry& op : OpRegistry::instance().all())
        op.launcher->prepare_workspace(workspace, options.workspace_bytes);
    }
  }

  ~Impl() {
    if (workspace != 0) rt::driver().mem_free(workspace);
    for (const auto& [pointer, bytes] : scratch_buffers) rt::driver().mem_free(pointer);
  }

  // A scratch buffer of at least `bytes`: the largest one, else a new one. Under the unique
  // lock, in the context.
  // NOTE: never the shared workspace, whose first 64 KB hold GEMM's split-K flags and launch
  // epoch across launches (sm90_flags.cuh): another op's scratch there would overwrite them.
  CUdeviceptr scratch_of(std::int64_t bytes) {
    if (!scratch_buffers.empty() && std::int64_t(scratch_buffers.back().second) >= bytes)
      return scratch_buffers.back().first;
    CUdeviceptr buffer = 0;
    rt::check(rt::driver().mem_alloc(&buffer, std::size_t(bytes)), "cuMemAlloc(scratch)");
    scratch_buffers.emplace_back(buffer, std::size_t(bytes));
    logger().info("scratch buffer of {} B allocated", bytes);
    return buffer;
  }

  rt::CubinResult compile(const OpSpec& op, const std::string& problem_key,
                          const std::string& config_key, std::string_view variant) {
    return rt::get_or_compile(db ? &*db : nullptr,
                              gen::generate(op, problem_key, config_key, variant, device.arch()),
                              options.compile_on_miss, !options.read_only);
  }

  // Record mode: a problem served without an exact tuned entry joins the manifest. A failure to
  // write it is logged once and never fails the call.
  void record(const std::string& problem_key) {
    if (!recorder) return;
    try {
      if (recorder->record(problem_key, device)) ++stats.problems_recorded;
    } catch (const Error& e) {
      if (!warned_record_failure)
        logger().warn("record mode: {} (recording continues to be tried)", e.what());
      warned_record_failure = true;
    }
  }

  // The kernel of (problem, config), loaded through the op's launcher, with its scratch: the
  // shared workspace for the op that keeps its state there (GEMM), a buffer of its own for any
  // other op's config that needs some (attention's split-KV partials, its backward's dQ
  // accumulator). Under the unique lock, in the context.
  Entry load_entry(const OpEntry& op_entry, const std::string& problem_key,
                   std::string_view variant, const std::string& config, rt::CubinResult& cubin,
                   DispatchInfo info) {
    const OpSpec& op = *op_entry.spec;
    const rt::LoadedModule& module =
        rt::load_or_rebuild(modules, cubin, db ? &*db : nullptr,
                            gen::generate(op, problem_key, config, variant, device.arch()),
                            options.compile_on_miss, !options.read_only);
    const std::int64_t scratch = op.workspace_bytes(problem_key, config, device);
    ++(cubin.compiled_now ? stats.cubins_compiled : stats.cubins_from_database);
    return Entry{&op_entry, op_entry.launcher->load(problem_key, config, module), std::move(info),
                 op_entry.launcher->uses_shared_workspace() || scratch == 0 ? workspace
                                                                            : scratch_of(scratch)};
  }

  // Benchmark mode: `pick` (the chain's) and the next distinct configs of the chain, up to
  // benchmark_candidates in all, each that compiles (all at once) and serves `call`, timed on the
  // op's timing copy of it (OpKernel::timing_call: the same inputs, outputs apart from them); the
  // fastest, graded "benchmarked". `pick` when the op offers no timing copy. Under the unique lock,
  // in the context.
  Entry benchmark(const OpEntry& op_entry, const std::string& problem_key, std::string_view variant,
                  std::int64_t max_workspace, Entry pick, const void* call, CUstream stream) {
    const OpSpec& op = *op_entry.spec;
    const std::size_t scratch_bytes = pick.kernel->timing_scratch_bytes(call);
    std::optional<rt::DeviceBuffer> scratch;
    if (scratch_bytes > 0) scratch.emplace(scratch_bytes);
    const std::shared_ptr<const void> timing =
        pick.kernel->timing_call(call, scratch ? scratch->get() : 0, stream);
    if (timing == nullptr) return pick;
    std::vector<rt::DispatchChoice> choices;
    std::unordered_set<std::string> seen{pick.info.config_key};
    for (rt::DispatchChoice& c :
         rt::benchmark_choices(db ? &*db : nullptr, op, problem_key, device, max_workspace,
                               std::size_t(benchmark_candidates)))
      if (choices.size() + 1 < std::size_t(benchmark_candidates) &&
          seen.insert(c.config_key).second)
        choices.push_back(std::move(c));
    // Their cubins at once: a first call that compiles most of them waits for about the slowest
    // compile, not their sum.
    std::vector<gen::GeneratedSource> sources;
    for (const rt::DispatchChoice& c : choices)
      sources.push_back(gen::generate(op, problem_key, c.config_key, variant, device.arch()));
    std::vector<rt::CubinAttempt> cubins = rt::get_or_compile_each(
        db ? &*db : nullptr, sources, options.compile_on_miss, !options.read_only);
    std::vector<Entry> candidates;
    candidates.push_back(std::move(pick));
    for (std::size_t i = 0; i < choices.size(); ++i) {
      const rt::DispatchChoice& c = choices[i];
      std::string why = cubins[i].error;
      if (cubins[i].cubin) {
        try {
          rt::CubinResult& cubin = *cubins[i].cubin;
          Entry e =
              load_entry(op_entry, problem_key, variant, c.config_key, cubin,
                         DispatchInfo{c.config_key, rt::to_string(c.grade), c.tuned_problem_key,
                                      c.tuned_device, cubin.compiled_now, c.predicted});
          if (e.kernel->serves(call)) candidates.push_back(std::move(e));
        } catch (const Error& e) {
          why = e.what();
        }
      }
      if (!why.empty())
        logger().debug("benchmark {}: {} not timed: {}", problem_key, c.config_key, why);
    }
    if (candidates.size() < 2) return std::move(candidates[0]);  // nothing to choose between
    std::vector<rt::TimedKernel> kernels;
    for (const Entry& e : candidates) kernels.push_back({e.kernel.get(), e.workspace});
    const std::vector<double> us =
        rt::median_times_us(kernels, timing.get(), stream, kBenchmarkRounds);
    const std::size_t best = std::size_t(std::min_element(us.begin(), us.end()) - us.begin());
    if (!std::isfinite(us[best])) return std::move(candidates[0]);  // its launch reports why
    logger().info(
        "benchmark {}: {} of {} configs timed on the first call, {:.1f} us (the chain's "
        "pick {}: {:.1f} us)",
        problem_key, candidates[best].info.config_key, candidates.size(), us[best],
        candidates[0].info.config_key, us[0]);
    Entry winner = std::move(candidates[best]);
    winner.info.grade = "benchmarked";
    winner.info.predicted = false;
    winner.info.configs_timed = int(candidates.size());
    return winner;
  }

  // The kernel of `problem_key`: the dispatch chain's config, or `fallback` (the op's config for
  // the calls a resolved kernel does not serve) when given; with `call` (the first call's
  // arguments), benchmark mode's fastest when it applies.
  const Entry& resolve(const OpEntry& op_entry, const std::string& problem_key,
                       std::string_view variant, const std::string& cache_key,
                       const std::string& fallback = {}, const void* call = nullptr,
                       CUstream stream = nullptr) {
    const OpSpec& op = *op_entry.spec;
    op.summarize(problem_key);  // validates
    std::unique_lock lock(mutex);
    if (auto it = entries.find(cache_key); it != entries.end()) return it->second;
    rt::ScopedCurrent current(context.context());
    cache::Database* database = db ? &*db : nullptr;
    const std::int64_t max_workspace =
        rt::workspace_cap_for(op, problem_key, device, std::int64_t(options.workspace_bytes));
    // The dispatch grades' choices in order, the first whose kernel is at hand: a runtime that
    // may not compile (no NVRTC here, or compile_on_miss off) skips those without a stored cubin.
    // The head of the list (this problem's measured winners, and its predicted one when no
    // neighbour measured anything) costs lookups; the rest (the neighbours' calibration and the
    // model's ranking enumerate the op's space) is made only when none of the head is at hand.
    std::vector<rt::DispatchChoice> choices =
        fallback.empty()
            ? rt::leading_choices(database, op, problem_key, device, max_workspace)
            : std::vector<rt::DispatchChoice>{{fallback, rt::DispatchGrade::kFallback, "", true}};
    bool complete = !fallback.empty();
    std::optional<rt::CubinResult> found;
    std::size_t pick = 0;
    while (!found) {
      if (pick == choices.size()) {
        std::vector<rt::DispatchChoice> all =
            rt::ranked_choices(database, op, problem_key, device, max_workspace,
                               kModelDefaultTries);  // starts with the measured choices
        choices.insert(choices.end(),
                       all.begin() + std::ptrdiff_t(std::min(choices.size(), all.size())),
                       all.end());
        complete = true;
      }
      try {
        found = compile(op, problem_key, choices[pick].config_key, variant);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kNotFound || (complete && pick + 1 == choices.size())) throw;
        logger().debug("dispatch {}: {} ({}) not served here: {}", problem_key,
                       choices[pick].config_key, rt::to_string(choices[pick].grade), e.what());
      }
      ++pick;
    }
    const rt::DispatchChoice& choice = choices[pick - 1];
    if (fallback.empty() && choice.grade != rt::DispatchGrade::kExact) record(problem_key);
    std::string config = choice.config_key;
    rt::CubinResult cubin = std::move(*found);
    if (choice.grade == rt::DispatchGrade::kModelDefault && cubin.record.spill_bytes > 0) {
      for (const std::string& next :
           rt::model_ranked_configs(op, problem_key, device, max_workspace, kModelDefaultTries)) {
        try {
          rt::CubinResult other = compile(op, problem_key, next, variant);
          if (other.record.spill_bytes == 0) {
            config = next;
            cubin = std::move(other);
            break;
          }
        } catch (const Error& e) {  // e.g. no NVRTC here: the first pick serves, spilling
          logger().debug("dispatch {}: {} not tried instead of a spilling kernel: {}", problem_key,
                         next, e.what());
          break;
        }
      }
    }
    Entry entry =
        load_entry(op_entry, problem_key, variant, config, cubin,
                   DispatchInfo{config, rt::to_string(choice.grade), choice.tuned_problem_key,
                                choice.tuned_device, cubin.compiled_now, choice.predicted});
    if (call != nullptr && fallback.empty() && choice.grade != rt::DispatchGrade::kExact &&
        benchmark_candidates > 1 && entry.kernel->serves(call) && !rt::stream_capturing(stream))
      entry =
          benchmark(op_entry, problem_key, variant, max_workspace, std::move(entry), call, stream);
    ++stats.kernels_by_grade[entry.info.grade];
    logger().debug("dispatch {} -> {} grade={} compiled={}", problem_key, entry.info.config_key,
                   entry.info.grade, entry.info.compiled_now);
    return entries.emplace(cache_key, std::move(entry)).first->second;
  }

  static std::string cache_key_of(const std::string& problem_key, std::string_view variant,
                                  bool fallback) {
    std::string cache_key = problem_key;
    if (!variant.empty()) cache_key.append("#").append(variant);
    if (fallback) cache_key.append("#fallback");
    return cache_key;
  }

  // The kept kernel of this cache key, or null.
  const Entry* kept(const std::string& cache_key) {
    std::shared_lock lock(mutex);
    const auto it = entries.find(cache_key);
    return it == entries.end() ? nullptr : &it->second;
  }

  // The kept kernel of (problem, variant), resolved on a miss (benchmark mode timing on `call`
  // when given); with `unserved` (a kept kernel that cannot serve a call), the op's fallback
  // kernel instead, kept beside it and logged once.
  const Entry& lookup(const OpEntry& op, const std::string& problem_key, std::string_view variant,
                      const Entry* unserved = nullptr, const void* call = nullptr,
                      CUstream stream = nullptr) {
    const std::string cache_key = cache_key_of(problem_key, variant, unserved != nullptr);
    if (const Entry* entry = kept(cache_key)) return *entry;
    if (unserved == nullptr) return resolve(op, problem_key, variant, cache_key, {}, call, stream);
    const std::string config = op.launcher->fallback_config(problem_key, device);
    if (config.empty())
      throw Error(ErrorKind::kInternal,
                  fmt::format("{}'s kernel {} cannot serve this call and the op has no fallback",
                              problem_key, unserved->info.config_key));
    logger().debug("dispatch {}: {} cannot serve a call; falling back to {}", problem_key,
                   unserved->info.config_key, config);
    return resolve(op, problem_key, variant, cache_key, config);
  }

  void launch(const std::string& problem_key, std::string_view variant, const void* call,
              Stream stream) {
    const OpEntry& op = OpRegistry::instance().by_key(problem_key);
    // Checked before any compile or launch: by the kept kernel against its parsed problem when
    // there is one (the warm path parses no key), else by the op's launcher before resolving.
    const Entry* entry = kept(cache_key_of(problem_key, variant, false));
    if (entry != nullptr) {
      entry->kernel->check_call(call);
    } else {
      op.launcher->check_call(problem_key, call);
      entry = &lookup(op, problem_key, variant, nullptr, call, static_cast<CUstream>(stream));
    }
    if (!entry->kernel->serves(call)) entry = &lookup(op, problem_key, variant, entry);
    rt::ScopedCurrent current(context.context());
    const CUresult result =
        entry->kernel->launch(call, entry->workspace, static_cast<CUstream>(stream));
    if (result != CUDA_SUCCESS)
      rt::check(result, fmt::format("cuLaunchKernel({})", op.spec->name()).c_str());
  }
};

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

std::unique_ptr<Runtime> Runtime::open(const RuntimeOptions& options) {
  return std::unique_ptr<Runtime>(new Runtime(std::make_unique<Impl>(options)));
}

void Runtime::launch(const std::string& problem_key, std::string_view variant, const void* call,
                     Stream stream) {
  impl_->launch(problem_key, variant, call, stream);
}

DispatchInfo Runtime::prepare(const std::string& problem_key, std::string_view variant) {
  return impl_->lookup(OpRegistry::instance().by_key(problem_key), problem_key, variant).info;
}

void Runtime::gemm(const GemmProblem& problem, const void* a, const void* b, void* c,
                   Stream stream) {
  validate(problem);
  const GemmCall call{a, b, c};
  launch(to_key(problem), "", &call, stream);
}

DispatchInfo Runtime::prepare_gemm(const GemmProblem& problem) {
  validate(problem);
  return prepare(to_key(problem));
}

void Runtime::attention_forward(const AttentionProblem& problem, const AttentionTensors& tensors,
                                Stream stream) {
  validate(problem);
  launch(to_key(problem), tensors.lse != nullptr ? "lse" : "", &tensors, stream);
}

void Runtime::attention_varlen(const AttentionProblem& exact, const AttentionTensors& tensors,
                               Stream stream) {
  if (!exact.varlen)
    throw_invalid(
        "attention_varlen takes a packed varlen batch: set problem.varlen and its totals "
        "(attention_forward serves padded batches)");
  validate(exact);
  if (tensors.total_q != exact.total_q || tensors.total_k != exact.total_k)
    throw_invalid(fmt::format(
        "attention_varlen: tensors hold {} query and {} key rows, the problem says {} and {}",
        tensors.total_q, tensors.total_k, exact.total_q, exact.total_k));
  launch(to_key(varlen_bucket(exact)), tensors.lse != nullptr ? "lse" : "", &tensors, stream);
}

DispatchInfo Runtime::prepare_attention(const AttentionProblem& problem, bool write_lse) {
  validate(problem);
  return prepare(to_key(problem), write_lse ? "lse" : "");
}

void Runtime::attention_backward(const AttentionBackwardProblem& problem,
                                 const AttentionBackwardTensors& tensors, Stream stream) {
  validate(problem);
  launch(to_key(problem), "", &tensors, stream);
}

DispatchInfo Runtime::prepare_attention_backward(const AttentionBackwardProblem& problem) {
  validate(problem);
  return prepare(to_key(problem));
}

void Runtime::rmsnorm(const RmsnormProblem& problem, const RmsnormTensors& tensors, Stream stream) {
  validate(problem);
  launch(to_key(problem), "", &tensors, stream);
}

DispatchInfo Runtime::prepare_rmsnorm(const RmsnormProblem& problem) {
  validate(problem);
  return prepare(to_key(problem));
}

std::string Runtime::device_fingerprint() const { return impl_->device.fingerprint(); }

RuntimeStats Runtime::stats() const {
  std::shared_lock lock(impl_->mutex);
  RuntimeStats out = impl_->stats;
  out.nvrtc_loaded = gen::nvrtc_loaded();
  return out;
}

}  // namespace kt
