// kt::Runtime: the embeddable dispatcher. A hit is a shared-lock hash lookup and a launch.
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include "core/log.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/attention_dispatch.hpp"
#include "runtime/attention_kernel.hpp"
#include "runtime/call_checks.hpp"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "runtime/gemm_dispatch.hpp"
#include "runtime/gemm_kernel.hpp"

namespace kt {

namespace {

struct GemmProblemHash {
  std::size_t operator()(const GemmProblem& p) const {
    std::size_t h = std::hash<std::int64_t>()(p.m);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<std::int64_t>()(p.n));
    mix(std::hash<std::int64_t>()(p.k));
    mix(std::size_t(p.in_dtype) | (std::size_t(p.out_dtype) << 8) | (std::size_t(p.layout) << 16));
    return h;
  }
};

constexpr std::size_t kModelDefaultTries = 4;

struct GemmEntry {
  rt::GemmKernel kernel;
  DispatchInfo info;
};

struct AttentionKey {
  AttentionProblem problem;
  bool write_lse = false;
  bool operator==(const AttentionKey&) const = default;
};

struct AttentionKeyHash {
  std::size_t operator()(const AttentionKey& k) const {
    const AttentionProblem& p = k.problem;
    std::size_t h = std::hash<std::int64_t>()(p.seqlen_q);
    auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (std::int64_t v : {p.batch, p.heads_q, p.heads_kv, p.seqlen_k, p.head_dim})
      mix(std::size_t(v));
    mix(std::size_t(p.dtype) | (std::size_t(p.causal) << 8) | (std::size_t(k.write_lse) << 9));
    return h;
  }
};

struct AttentionEntry {
  rt::AttentionKernel kernel;
  DispatchInfo info;
};

}  // namespace

struct Runtime::Impl {
  RuntimeOptions options;
  rt::BoundContext context;
  DeviceDesc device;
  std::optional<cache::Database> db;
  rt::ModuleCache modules;
  CUdeviceptr workspace = 0;
  std::shared_mutex mutex;
  std::unordered_map<GemmProblem, GemmEntry, GemmProblemHash> gemms;
  std::unordered_map<AttentionKey, AttentionEntry, AttentionKeyHash> attentions;

  explicit Impl(const RuntimeOptions& o) : options(o), context(o.device_ordinal) {
    device = rt::query_device(context.device());
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
      rt::clear_gemm_workspace_flags(workspace, options.workspace_bytes);
    }
  }

  ~Impl() {
    if (workspace != 0) rt::driver().mem_free(workspace);
  }

  const GemmEntry& resolve(const GemmProblem& p) {
    validate(p);
    std::unique_lock lock(mutex);
    if (auto it = gemms.find(p); it != gemms.end()) return it->second;
    rt::ScopedCurrent current(context.context());
    cache::Database* database = db ? &*db : nullptr;
    const rt::GemmChoice choice =
        rt::choose_gemm_config(database, p, device, std::int64_t(options.workspace_bytes));
    GemmConfig config = choice.config;
    rt::CubinResult cubin = compile(database, p, config);
    if (choice.grade == rt::DispatchGrade::kModelDefault && cubin.record.spill_bytes > 0) {
      // The model cannot see register spills: take the next of its picks that compiles clean.
      for (const GemmConfig& next : rt::model_ranked_configs(
               p, device, std::int64_t(options.workspace_bytes), kModelDefaultTries)) {
        rt::CubinResult other = compile(database, p, next);
        if (other.record.spill_bytes == 0) {
          config = next;
          cubin = std::move(other);
          break;
        }
      }
    }
    const rt::LoadedModule& module =
        rt::load_or_rebuild(modules, cubin, database, gen::generate_gemm(p, config, device.arch()),
                            options.compile_on_miss, !options.read_only);
    GemmEntry entry{rt::GemmKernel(p, config, module),
                    DispatchInfo{to_key(config), rt::to_string(choice.grade),
                                 choice.tuned_problem_key, cubin.compiled_now}};
    logger().debug("dispatch {} -> {} grade={} compiled={}", to_key(p), entry.info.config_key,
                   entry.info.grade, entry.info.compiled_now);
    return gemms.emplace(p, std::move(entry)).first->second;
  }

  const AttentionEntry& resolve_attention(const AttentionKey& key) {
    validate(key.problem);
    std::unique_lock lock(mutex);
    if (auto it = attentions.find(key); it != attentions.end()) return it->second;
    rt::ScopedCurrent current(context.context());
    cache::Database* database = db ? &*db : nullptr;
    const rt::AttentionChoice choice = rt::choose_attention_config(database, key.problem, device);
    AttentionConfig config = choice.config;
    auto compile_attention = [&](const AttentionConfig& c) {
      return rt::get_or_compile(
          database, gen::generate_attention(key.problem, c, key.write_lse, device.arch()),
          options.compile_on_miss, !options.read_only);
    };
    rt::CubinResult cubin = compile_attention(config);
    if (choice.grade == rt::DispatchGrade::kModelDefault && cubin.record.spill_bytes > 0) {
      for (const AttentionConfig& next :
           rt::model_ranked_attention_configs(key.problem, device, kModelDefaultTries)) {
        rt::CubinResult other = compile_attention(next);
        if (other.record.spill_bytes == 0) {
          config = next;
          cubin = std::move(other);
          break;
        }
      }
    }
    const rt::LoadedModule& module = rt::load_or_rebuild(
        modules, cubin, database,
        gen::generate_attention(key.problem, config, key.write_lse, device.arch()),
        options.compile_on_miss, !options.read_only);
    AttentionEntry entry{rt::AttentionKernel(key.problem, config, module),
                         DispatchInfo{to_key(config), rt::to_string(choice.grade),
                                      choice.tuned_problem_key, cubin.compiled_now}};
    return attentions.emplace(key, std::move(entry)).first->second;
  }

  const AttentionEntry& lookup_attention(const AttentionKey& key) {
    {
      std::shared_lock lock(mutex);
      if (auto it = attentions.find(key); it != attentions.end()) return it->second;
    }
    return resolve_attention(key);
  }

  rt::CubinResult compile(cache::Database* database, const GemmProblem& p, const GemmConfig& c) {
    return rt::get_or_compile(database, gen::generate_gemm(p, c, device.arch()),
                              options.compile_on_miss, !options.read_only);
  }

  const GemmEntry& lookup(const GemmProblem& p) {
    {
      std::shared_lock lock(mutex);
      if (auto it = gemms.find(p); it != gemms.end()) return it->second;
    }
    return resolve(p);
  }
};

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

std::unique_ptr<Runtime> Runtime::open(const RuntimeOptions& options) {
  return std::unique_ptr<Runtime>(new Runtime(std::make_unique<Impl>(options)));
}

void Runtime::gemm(const GemmProblem& problem, const void* a, const void* b, void* c,
                   Stream stream) {
  rt::check_gemm_call(problem, a, b, c);
  const GemmEntry& entry = impl_->lookup(problem);
  rt::ScopedCurrent current(impl_->context.context());
  rt::check(entry.kernel.launch(a, b, c, reinterpret_cast<void*>(impl_->workspace),
                                static_cast<CUstream>(stream)),
            "cuLaunchKernel(gemm)");
}

DispatchInfo Runtime::prepare_gemm(const GemmProblem& problem) {
  return impl_->lookup(problem).info;
}

void Runtime::attention_forward(const AttentionProblem& problem, const AttentionTensors& tensors,
                                Stream stream) {
  rt::check_attention_call(problem, tensors);
  const AttentionEntry& entry = impl_->lookup_attention({problem, tensors.lse != nullptr});
  rt::ScopedCurrent current(impl_->context.context());
  rt::check(entry.kernel.launch(tensors, static_cast<CUstream>(stream)),
            "cuLaunchKernel(attention_forward)");
}

DispatchInfo Runtime::prepare_attention(const AttentionProblem& problem, bool write_lse) {
  return impl_->lookup_attention({problem, write_lse}).info;
}

std::string Runtime::device_fingerprint() const { return impl_->device.fingerprint(); }

}  // namespace kt
