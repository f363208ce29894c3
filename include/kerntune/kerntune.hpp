// kerntune runtime, C++ API: open a tuning database, then launch shape-specialized kernels.
// Dispatch is a lookup (a tuned winner, graded by how closely its device and shape match this
// one, else the model's pick), never a tune.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/attention_problem.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "ops/attention_backward/attention_backward_problem.hpp"
#include "ops/rmsnorm/rmsnorm_problem.hpp"

namespace kt {

using Stream = void*;  // a CUstream (cudaStream_t); nullptr is the legacy default stream

struct RuntimeOptions {
  std::string database_path;    // empty: $KERNTUNE_DB or the user cache directory
  bool read_only = false;       // never write compiled cubins back to the database
  bool compile_on_miss = true;  // false: a shape without a cubin in the DB is an error
  int device_ordinal = 0;       // used when the calling thread has no current context
  // Scratch allocated once at open; it bounds what configs may choose to use (GEMM's split-K).
  // An op's scratch it cannot run without (attention backward's FP32 dQ accumulator) is a buffer
  // of its own instead, of any size, allocated when a problem needing more is first resolved and
  // kept for the runtime's life.
  std::size_t workspace_bytes = 64u << 20;
  // Record mode: every problem served without an exact tuned entry is appended to this fleet
  // manifest (kerntune fleet run tunes it). Empty: $KERNTUNE_RECORD, else no recording.
  std::string record_path;
  // Benchmark mode (cudnn.benchmark's idea, for shapes nobody tuned): a problem's first call,
  // when this device has no measured winner for it, times the first this-many configs of the
  // dispatch chain on the call's own tensors and keeps the fastest for the runtime's life (its
  // grade "benchmarked"; nothing is stored: `kerntune tune` or record mode makes it lasting).
  // Outputs that overlap an input (an in-place residual add) are written to scratch while the
  // candidates are timed. Skipped, and the chain's pick served, while the stream is being captured
  // and by prepare_*(), which has no tensors. Negative: $KERNTUNE_BENCHMARK, else 0 (off).
  int benchmark_candidates = -1;
};

struct DispatchInfo {
  std::string config_key;  // e.g. "sm80.bm128.bn256.bk32.wm64.wn64.s3.g8.sk1"
  // How the config was found, best first: "exact" (measured for this problem on this device),
  // "benchmarked" (the fastest of the dispatch chain's first configs, timed on this problem's
  // first call: RuntimeOptions::benchmark_candidates), "same-model" (on this GPU model with
  // another SM count), "same-cc" (on another GPU of this compute capability, re-scored by the
  // model), "nearest-shape" (measured on nearby problems), "predicted" (the model's pick for this
  // problem, compiled and stored by a tuner without a GPU), "model-default" (the model's pick
  // here), or "fallback" (a call the chosen kernel cannot address).
  std::string grade;
  std::string tuned_problem_key;  // the tuned shape the config came from, if any
  std::string tuned_device;       // the device fingerprint it was tuned for, if any
  bool compiled_now = false;      // NVRTC ran (the DB had no cubin)
  bool predicted = true;          // the config was picked by the model, not measured
  int configs_timed = 0;          // "benchmarked": how many configs the first call timed
};

// What a runtime has served since it was opened.
struct RuntimeStats {
  std::map<std::string, std::int64_t> kernels_by_grade;  // DispatchInfo::grade -> kernels resolved
  std::int64_t cubins_from_database = 0;  // kernels loaded from cubins the database held
  std::int64_t cubins_compiled = 0;       // kernels NVRTC compiled for this runtime
  std::int64_t problems_recorded = 0;     // problem lines record mode appended
  bool nvrtc_loaded = false;              // NVRTC has been loaded in this process (by any caller)
};

// Device pointers and element strides of one attention call. Each tensor is addressed as
// base + b * batch_stride + i * row_stride + h * head_stride + d (head_dim contiguous), so both
// (B, N, H, d) and (B, H, N, d) layouts work without copies. Strides must be multiples of 8
// elements and pointers 16-byte aligned.
struct AttentionTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;         // optional: [batch, heads_q, seqlen_q] FP32 logsumexp (natural log)
  std::int64_t q_strides[3]{};  // batch, row (sequence position), head
  std::int64_t k_strides[3]{};
  std::int64_t v_strides[3]{};
  std::int64_t o_strides[3]{};
  float softmax_scale = 0;  // 0: 1 / sqrt(head_dim)
  // A packed variable-length batch (problem.varlen): Q and O hold total_q rows, K and V total_k
  // (batch strides unused), and cu_seqlens_q / cu_seqlens_k are device arrays of batch + 1
  // non-decreasing int32 row offsets from 0 to total_q / total_k whose differences are at most
  // the problem's seqlen_q / seqlen_k (the caller's contract, as flash_attn_varlen_func's: the
  // kernels do not check them). lse is then [heads_q, total_q].
  const std::int32_t* cu_seqlens_q = nullptr;
  const std::int32_t* cu_seqlens_k = nullptr;
  std::int64_t total_q = 0;
  std::int64_t total_k = 0;

  // Dense (B, N, H, d) strides for every tensor (the FlashAttention layout).
  void set_bnhd_strides(const AttentionProblem& problem);
  // Dense (B, H, N, d) strides for every tensor (PyTorch SDPA's layout).
  void set_bhnd_strides(const AttentionProblem& problem);
};

class Runtime {
 public:
  // Binds to the calling thread's current CUDA context (or retains the primary context of
  // options.device_ordinal) and opens the database (created if absent unless read_only; a
  // read-only runtime with no file dispatches from the model). Throws kt::Error.
  static std::unique_ptr<Runtime> open(const RuntimeOptions& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // C[M,N] = A[M,K] · B on `stream` (B is KxN for Layout::kNN, NxK for kNT; all row-major,
  // dense). The first call for a shape resolves and loads its kernel (and may compile); later
  // calls are a hash lookup and a launch. Thread-safe; capturable into CUDA graphs once the
  // shape is prepared. Throws kt::Error naming the bad argument or the failed driver call.
  void gemm(const GemmProblem& problem, const void* a, const void* b, void* c,
            Stream stream = nullptr);

  // Resolves and loads the kernel for `problem` without launching, and says where it came from.
  DispatchInfo prepare_gemm(const GemmProblem& problem);

  // O = softmax(scale · Q·Kᵀ [causal mask]) · V for every (batch, query head), GQA/MQA by
  // head_kv = head_q / (heads_q / heads_kv); writes the row logsumexp when tensors.lse is set.
  // Dispatch and threading as gemm(). Throws kt::Error naming the bad argument.
  void attention_forward(const AttentionProblem& problem, const AttentionTensors& tensors,
                         Stream stream = nullptr);
  DispatchInfo prepare_attention(const AttentionProblem& problem, bool write_lse = false);
  // A packed variable-length batch: `exact` holds its sequence count, longest lengths and totals
  // (varlen set), `tensors` its cu_seqlens. Dispatched as its bucket (varlen_bucket), so batches
  // of similar lengths share one tuned kernel. Throws kt::Error naming the bad argument.
  void attention_varlen(const AttentionProblem& exact, const AttentionTensors& tensors,
                        Stream stream = nullptr);

  // dQ, dK, dV of attention_forward's problem from dO, the forward's O and its logsumexp
  // (tensors.lse, the "lse" variant's output), dK and dV of a key/value head summed over its
  // query heads; problem.deterministic sums dQ in a fixed order (bitwise reproducible). dQ's
  // FP32 accumulator is the runtime's scratch buffer (4 · B · Hq · Nq · d bytes and more,
  // allocated when a problem needing more is first resolved: prepare it before capturing a
  // graph), which calls on one runtime share: they must not run concurrently on different
  // streams. Dispatch and threading as gemm(). Throws kt::Error naming the bad argument.
  void attention_backward(const AttentionBackwardProblem& problem,
                          const AttentionBackwardTensors& tensors, Stream stream = nullptr);
  DispatchInfo prepare_attention_backward(const AttentionBackwardProblem& problem);

  // y = x · rsqrt(mean(x²) + eps) · w per row (after x = x + residual, the sum written to
  // tensors.residual_out, when problem.residual). Dispatch and threading as gemm().
  void rmsnorm(const RmsnormProblem& problem, const RmsnormTensors& tensors,
               Stream stream = nullptr);
  DispatchInfo prepare_rmsnorm(const RmsnormProblem& problem);

  // Any registered op by its problem key ("gemm:...", "attn:...", "attnbwd:...", "rmsnorm:..."):
  // `call` points to the op's call struct (GemmCall, AttentionTensors, AttentionBackwardTensors,
  // RmsnormTensors), checked against the
  // problem before anything else; `variant` names an instantiation the op offers (attention's
  // "lse"), empty for the default. The per-op entries above are these with the op's types.
  void launch(const std::string& problem_key, std::string_view variant, const void* call,
              Stream stream = nullptr);
  DispatchInfo prepare(const std::string& problem_key, std::string_view variant = {});

  // "NVIDIA H200/cc90/132sm": the device part of every tuning key.
  std::string device_fingerprint() const;

  // Counts of what this runtime has resolved and loaded so far. Thread-safe.
  RuntimeStats stats() const;

  struct Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kt
