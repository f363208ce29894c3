// The C ABI over kt::Runtime: exceptions become kt_status codes plus a thread-local message.
// A call's arguments are checked before its runtime handle and before any device work, so a bad
// call is reported the same way with or without a GPU.
#include "kerntune/kerntune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "core/attention_problem.hpp"
#include "core/op_registry.hpp"
#include "kerntune/kerntune.hpp"
#include "runtime/op_launcher.hpp"

struct kt_runtime {
  std::unique_ptr<kt::Runtime> runtime;
};

namespace {

thread_local std::string g_last_error;

kt_status status_of(kt::ErrorKind kind) {
  switch (kind) {
    case kt::ErrorKind::kInvalidArgument:
      return KT_ERROR_INVALID_ARGUMENT;
    case kt::ErrorKind::kUnsupported:
      return KT_ERROR_UNSUPPORTED;
    case kt::ErrorKind::kCompile:
      return KT_ERROR_COMPILE;
    case kt::ErrorKind::kCuda:
      return KT_ERROR_CUDA;
    case kt::ErrorKind::kDatabase:
      return KT_ERROR_DATABASE;
    case kt::ErrorKind::kNotFound:
      return KT_ERROR_NOT_FOUND;
    case kt::ErrorKind::kInternal:
      return KT_ERROR_INTERNAL;
  }
  return KT_ERROR_INTERNAL;
}

template <typename Fn>
kt_status guarded(Fn&& fn) {
  try {
    fn();
    g_last_error.clear();
    return KT_SUCCESS;
  } catch (const kt::Error& e) {
    g_last_error = e.what();
    return status_of(e.kind());
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return KT_ERROR_INTERNAL;
  }
}

// The one path of every op's entry: Runtime::launch, which checks the call first. Without a
// handle the op's checks still run before the NULL is reported, so a bad call reads the same
// with or without a GPU.
void launch_checked(kt_runtime* runtime, const char* entry, const std::string& problem_key,
                    std::string_view variant, const void* call, void* stream) {
  if (runtime == nullptr) {
    kt::OpRegistry::instance().by_key(problem_key).launcher->check_call(problem_key, call);
    kt::throw_invalid(std::string(entry) + ": runtime is NULL (call kt_runtime_open)");
  }
  runtime->runtime->launch(problem_key, variant, call, stream);
}

// The integer a C caller stored in an enum-typed argument. NOTE: C lets any int through a
// kt_dtype or kt_layout; in C++ reading such an enum object outside its enumerators' range is
// undefined, so the bytes are read as an int and compared with the enumerators.
template <typename Enum>
int raw_value(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "the C ABI's enums are int-sized");
  int raw = 0;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

kt::DType to_dtype(int d) {
  switch (d) {
    case KT_DTYPE_BF16:
      return kt::DType::kBF16;
    case KT_DTYPE_FP16:
      return kt::DType::kFP16;
    case KT_DTYPE_FP32:
      return kt::DType::kFP32;
    default:
      kt::throw_invalid("unknown kt_dtype value " + std::to_string(d));
  }
}

// What kt_attention_args and kt_attention_backward_args share, field by field under the same
// names, into the op's problem and tensors: the sizes, dtype and mask; Q, K, V, O, the logsumexp
// and their strides; the softmax scale.
template <typename Args, typename Problem, typename Tensors>
void attention_call(const Args& args, Problem& p, Tensors& t) {
  copy_attention_sizes(p, args);
  p.dtype = to_dtype(raw_value(args.dtype));
  p.causal = args.causal != 0;
  t.q = args.q;
  t.k = args.k;
  t.v = args.v;
  t.o = args.o;
  t.lse = args.lse;
  for (int i = 0; i < 3; ++i) {
    t.q_strides[i] = args.q_strides[i];
    t.k_strides[i] = args.k_strides[i];
    t.v_strides[i] = args.v_strides[i];
    t.o_strides[i] = args.o_strides[i];
  }
  t.softmax_scale = args.softmax_scale;
}

}  // namespace

extern "C" {

kt_status kt_runtime_open(const char* database_path, int read_only, kt_runtime** out) {
  return kt_runtime_open_device(database_path, read_only, 0, out);
}

kt_status kt_runtime_open_device(const char* database_path, int read_only, int device_ordinal,
                                 kt_runtime** out) {
  kt_runtime_options options{};
  options.struct_size = sizeof options;
  options.database_path = database_path;
  options.read_only = read_only;
  options.device_ordinal = device_ordinal;
  return kt_runtime_open_options(&options, out);
}

kt_status kt_runtime_open_options(const kt_runtime_options* options, kt_runtime** out) {
  return guarded([&] {
    if (out == nullptr) kt::throw_invalid("kt_runtime_open: out is NULL");
    *out = nullptr;
    if (options == nullptr) kt::throw_invalid("kt_runtime_open_options: options is NULL");
    if (options->struct_size != sizeof(kt_runtime_options))
      kt::throw_invalid(fmt::format(
          "kt_runtime_open_options: struct_size is {}, this library's kt_runtime_options has {} "
          "bytes (set it to sizeof(kt_runtime_options) from the header this library came with)",
          options->struct_size, sizeof(kt_runtime_options)));
    if (options->device_ordinal < 0)
      kt::throw_invalid(fmt::format(
          "kt_runtime_open_device: device ordinal {} is negative (CUDA devices count from 0)",
          options->device_ordinal));
    kt::RuntimeOptions o;
    if (options->database_path != nullptr) o.database_path = options->database_path;
    o.read_only = options->read_only != 0;
    o.device_ordinal = options->device_ordinal;
    if (options->record_path != nullptr) o.record_path = options->record_path;
    o.benchmark_candidates =
        options->benchmark_candidates == 0 ? -1 : std::max(options->benchmark_candidates, 0);
    auto handle = std::make_unique<kt_runtime>();
    handle->runtime = kt::Runtime::open(o);
    *out = handle.release();
  });
}

void kt_runtime_close(kt_runtime* runtime) { delete runtime; }

kt_status kt_gemm(kt_runtime* runtime, int64_t m, int64_t n, int64_t k, kt_dtype in_dtype,
                  kt_dtype out_dtype, kt_layout layout, const void* a, const void* b, void* c,
                  void* stream) {
  return guarded([&] {
    const int raw_layout = raw_value(layout);
    if (raw_layout != KT_LAYOUT_NN && raw_layout != KT_LAYOUT_NT)
      kt::throw_invalid("kt_gemm: unknown kt_layout value " + std::to_string(raw_layout));
    kt::GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.in_dtype = to_dtype(raw_value(in_dtype));
    p.out_dtype = to_dtype(raw_value(out_dtype));
    p.layout = raw_layout == KT_LAYOUT_NN ? kt::Layout::kNN : kt::Layout::kNT;
    kt::validate(p);
    const kt::GemmCall call{a, b, c};
    launch_checked(runtime, "kt_gemm", kt::to_key(p), "", &call, stream);
  });
}

kt_status kt_attention_forward(kt_runtime* runtime, const kt_attention_args* args, void* stream) {
  return guarded([&] {
    if (args == nullptr) kt::throw_invalid("kt_attention_forward: args is NULL");
    kt::AttentionProblem p;
    kt::AttentionTensors t;
    attention_call(*args, p, t);
    kt::validate(p);
    launch_checked(runtime, "kt_attention_forward", kt::to_key(p), t.lse != nullptr ? "lse" : "",
                   &t, stream);
  });
}

kt_status kt_attention_backward(kt_runtime* runtime, const kt_attention_backward_args* args,
                                void* stream) {
  return guarded([&] {
    if (args == nullptr) kt::throw_invalid("kt_attention_backward: args is NULL");
    kt::AttentionBackwardProblem p;
    kt::AttentionBackwardTensors t;
    attention_call(*args, p, t);
    p.deterministic = args->deterministic != 0;
    t.dout = args->dout;
    t.dq = args->dq;
    t.dk = args->dk;
    t.dv = args->dv;
    for (int i = 0; i < 3; ++i) {
      t.dout_strides[i] = args->dout_strides[i];
      t.dq_strides[i] = args->dq_strides[i];
      t.dk_strides[i] = args->dk_strides[i];
      t.dv_strides[i] = args->dv_strides[i];
    }
    kt::validate(p);
    launch_checked(runtime, "kt_attention_backward", kt::to_key(p), "", &t, stream);
  });
}

kt_status kt_attention_varlen(kt_runtime* runtime, const kt_attention_args* args,
                              const int32_t* cu_seqlens_q, const int32_t* cu_seqlens_k,
                              int64_t total_q, int64_t total_k, void* stream) {
  return guarded([&] {
    if (args == nullptr) kt::throw_invalid("kt_attention_varlen: args is NULL");
    kt::AttentionProblem p;
    kt::AttentionTensors t;
    attention_call(*args, p, t);
    p.varlen = true;
    p.total_q = t.total_q = total_q;
    p.total_k = t.total_k = total_k;
    t.cu_seqlens_q = cu_seqlens_q;
    t.cu_seqlens_k = cu_seqlens_k;
    kt::validate(p);
    launch_checked(runtime, "kt_attention_varlen", kt::to_key(kt::varlen_bucket(p)),
                   t.lse != nullptr ? "lse" : "", &t, stream);
  });
}

kt_status kt_rmsnorm(kt_runtime* runtime, const kt_rmsnorm_args* args, void* stream) {
  return guarded([&] {
    if (args == nullptr) kt::throw_invalid("kt_rmsnorm: args is NULL");
    kt::RmsnormProblem p;
    p.rows = args->rows;
    p.hidden = args->hidden;
    p.dtype = to_dtype(raw_value(args->dtype));
    p.residual = args->residual != nullptr || args->residual_out != nullptr;
    kt::validate(p);
    const kt::RmsnormTensors t{args->x,        args->weight,       args->y,
                               args->residual, args->residual_out, args->eps};
    launch_checked(runtime, "kt_rmsnorm", kt::to_key(p), "", &t, stream);
  });
}

kt_status kt_prepare(kt_runtime* runtime, const char* problem_key, const char* variant,
                     kt_dispatch_info* out) {
  return guarded([&] {
    if (problem_key == nullptr) kt::throw_invalid("kt_prepare: problem_key is NULL");
    if (out == nullptr) kt::throw_invalid("kt_prepare: out is NULL");
    if (runtime == nullptr) kt::throw_invalid("kt_prepare: runtime is NULL (call kt_runtime_open)");
    const kt::DispatchInfo info =
        runtime->runtime->prepare(problem_key, variant != nullptr ? variant : "");
    auto copy = [](char* dst, std::size_t cap, const std::string& src) {
      const std::size_t n = std::min(cap - 1, src.size());
      std::memcpy(dst, src.data(), n);
      dst[n] = '\0';
    };
    copy(out->config_key, sizeof out->config_key, info.config_key);
    copy(out->grade, sizeof out->grade, info.grade);
    copy(out->tuned_problem_key, sizeof out->tuned_problem_key, info.tuned_problem_key);
    out->compiled_now = info.compiled_now ? 1 : 0;
    out->predicted = info.predicted ? 1 : 0;
  });
}

kt_status kt_runtime_get_stats(kt_runtime* runtime, kt_runtime_stats* out) {
  return guarded([&] {
    if (out == nullptr) kt::throw_invalid("kt_runtime_get_stats: out is NULL");
    if (runtime == nullptr)
      kt::throw_invalid("kt_runtime_get_stats: runtime is NULL (call kt_runtime_open)");
    const kt::RuntimeStats stats = runtime->runtime->stats();
    auto count = [&](const char* grade) {
      const auto it = stats.kernels_by_grade.find(grade);
      return it == stats.kernels_by_grade.end() ? std::int64_t(0) : it->second;
    };
    *out = kt_runtime_stats{};
    out->exact = count("exact");
    out->benchmarked = count("benchmarked");
    out->same_model = count("same-model");
    out->same_cc = count("same-cc");
    out->nearest_shape = count("nearest-shape");
    out->predicted = count("predicted");
    out->model_default = count("model-default");
    out->fallback = count("fallback");
    out->cubins_from_database = stats.cubins_from_database;
    out->cubins_compiled = stats.cubins_compiled;
    out->problems_recorded = stats.problems_recorded;
    out->nvrtc_loaded = stats.nvrtc_loaded ? 1 : 0;
  });
}

const char* kt_last_error(void) { return g_last_error.c_str(); }

const char* kt_version(void) { return KT_VERSION; }

}  // extern "C"
