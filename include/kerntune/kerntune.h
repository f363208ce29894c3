/* kerntune runtime, C ABI for FFI (ctypes, Rust, Go...). Every call returns a kt_status; on
 * failure kt_last_error() gives this thread's message. Opaque handles; no C++ types cross.
 * Arguments (sizes, enum values, null and misaligned pointers, strides) are checked before the
 * runtime handle and before any device work: KT_ERROR_INVALID_ARGUMENT names the bad one. */
#ifndef KERNTUNE_KERNTUNE_H_
#define KERNTUNE_KERNTUNE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kt_runtime kt_runtime;

typedef enum kt_status {
  KT_SUCCESS = 0,
  KT_ERROR_INVALID_ARGUMENT = 1,
  KT_ERROR_UNSUPPORTED = 2,
  KT_ERROR_COMPILE = 3,
  KT_ERROR_CUDA = 4,
  KT_ERROR_DATABASE = 5,
  KT_ERROR_NOT_FOUND = 6,
  KT_ERROR_INTERNAL = 7
} kt_status;

typedef enum kt_dtype { KT_DTYPE_BF16 = 0, KT_DTYPE_FP16 = 1, KT_DTYPE_FP32 = 2 } kt_dtype;

/* KT_LAYOUT_NN: B is KxN row-major. KT_LAYOUT_NT: B is NxK row-major (linear-layer weight). */
typedef enum kt_layout { KT_LAYOUT_NN = 0, KT_LAYOUT_NT = 1 } kt_layout;

/* database_path: NULL for the default ($KERNTUNE_DB or the user cache directory).
 * read_only: nonzero to never write to the database. */
kt_status kt_runtime_open(const char* database_path, int read_only, kt_runtime** out);
/* kt_runtime_open on CUDA device `device_ordinal` (>= 0) when the calling thread has no current
 * context (kt_runtime_open: device 0); with one, that context's device is used. */
kt_status kt_runtime_open_device(const char* database_path, int read_only, int device_ordinal,
                                 kt_runtime** out);
/* kt_runtime_open with every option: zero the struct, set struct_size to
 * sizeof(kt_runtime_options), then the fields wanted. */
typedef struct kt_runtime_options {
  uint32_t struct_size;      /* sizeof(kt_runtime_options) */
  const char* database_path; /* NULL: the default, as kt_runtime_open */
  int read_only;             /* nonzero: never write to the database */
  int device_ordinal;        /* as kt_runtime_open_device */
  const char* record_path;   /* record mode: problems served without an exact tuned entry are
                                appended to this fleet manifest; NULL: $KERNTUNE_RECORD, else none */
  int benchmark_candidates;  /* benchmark mode (kerntune.hpp's RuntimeOptions): a problem with no
                                measured winner here times this many configs on its first call and
                                keeps the fastest; 0: $KERNTUNE_BENCHMARK, else off; negative: off */
} kt_runtime_options;
kt_status kt_runtime_open_options(const kt_runtime_options* options, kt_runtime** out);
void kt_runtime_close(kt_runtime* runtime);

/* C = A·B on stream (a CUstream / cudaStream_t, or NULL). Row-major, dense. A and B aligned as
 * their rows are: 16 bytes for rows of a multiple of 8 elements (A: K; B: K for nt, N for nn);
 * nn's B of other even N 8 bytes for N % 4 == 0, else 4; otherwise their element size. C aligned
 * to its element size. */
kt_status kt_gemm(kt_runtime* runtime, int64_t m, int64_t n, int64_t k, kt_dtype in_dtype,
                  kt_dtype out_dtype, kt_layout layout, const void* a, const void* b, void* c,
                  void* stream);

/* One attention-forward call. Strides are in elements: batch, row (sequence position), head;
 * head_dim is contiguous. lse may be NULL; softmax_scale 0 means 1/sqrt(head_dim). */
typedef struct kt_attention_args {
  int64_t batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim;
  kt_dtype dtype;
  int causal;
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  int64_t q_strides[3];
  int64_t k_strides[3];
  int64_t v_strides[3];
  int64_t o_strides[3];
  float softmax_scale;
} kt_attention_args;

/* O = softmax(scale * Q K^T [causal]) V on stream; GQA/MQA when heads_kv < heads_q. */
kt_status kt_attention_forward(kt_runtime* runtime, const kt_attention_args* args, void* stream);

/* A packed variable-length batch (flash_attn_varlen_func's layout): args->batch sequences, the
 * longest args->seqlen_q x args->seqlen_k; Q and O hold total_q rows, K and V total_k (the batch
 * strides are unused); cu_seqlens_q / cu_seqlens_k are device arrays of batch + 1 non-decreasing
 * int32 offsets from 0 to the totals (not checked by the kernels); lse, if set, is
 * [heads_q, total_q]. Causal masks each sequence on its own, bottom-right aligned. */
kt_status kt_attention_varlen(kt_runtime* runtime, const kt_attention_args* args,
                              const int32_t* cu_seqlens_q, const int32_t* cu_seqlens_k,
                              int64_t total_q, int64_t total_k, void* stream);

/* One attention-backward call: dq, dk, dv of the forward problem from dout, the forward's o and
 * its lse ([batch, heads_q, seqlen_q] FP32 natural-log logsumexp, as kt_attention_forward writes
 * it); dk, dv of a key/value head are summed over its query heads. deterministic nonzero sums dq
 * in a fixed order (bitwise reproducible). head_dim 64, 96, 128 or 256. Strides as
 * kt_attention_args (elements: batch, row, head; multiples of 8; head_dim contiguous);
 * softmax_scale the forward's (0 means 1/sqrt(head_dim)). Uses the runtime's scratch buffer
 * (allocated when a problem needing more is first seen); calls on one runtime must not run
 * concurrently on different streams. */
typedef struct kt_attention_backward_args {
  int64_t batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim;
  kt_dtype dtype;
  int causal;
  int deterministic;
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* dout;
  const float* lse;
  void* dq;
  void* dk;
  void* dv;
  int64_t q_strides[3];
  int64_t k_strides[3];
  int64_t v_strides[3];
  int64_t o_strides[3];
  int64_t dout_strides[3];
  int64_t dq_strides[3];
  int64_t dk_strides[3];
  int64_t dv_strides[3];
  float softmax_scale;
} kt_attention_backward_args;

kt_status kt_attention_backward(kt_runtime* runtime, const kt_attention_backward_args* args,
                                void* stream);

/* One fused RMSNorm call: y = x * rsqrt(mean(x^2) + eps) * weight per row of hidden elements;
 * with residual (and residual_out) set, x = x + residual first and the sum is written to
 * residual_out (which may be residual itself). Dense rows, 16-byte aligned pointers. */
typedef struct kt_rmsnorm_args {
  int64_t rows, hidden;
  kt_dtype dtype;
  const void* x;
  const void* weight;
  void* y;
  const void* residual;
  void* residual_out;
  float eps;
} kt_rmsnorm_args;

kt_status kt_rmsnorm(kt_runtime* runtime, const kt_rmsnorm_args* args, void* stream);

/* Where a problem's kernel comes from, resolved (and loaded) without launching. */
typedef struct kt_dispatch_info {
  char config_key[160];
  char grade[32]; /* "exact", "same-model", "same-cc", "nearest-shape", "predicted",
                     "model-default" or "fallback" (kerntune.hpp's DispatchInfo says what each
                     means) */
  char tuned_problem_key[160];
  int compiled_now; /* NVRTC ran: the database had no cubin */
  int predicted;    /* the config was picked by the model, not measured */
} kt_dispatch_info;

/* Any op by its problem key ("gemm:...", "attn:...", "attnbwd:...", "rmsnorm:...", as
 * `kerntune ops` lists);
 * variant NULL or "" for the default instantiation (attention: "lse" too). */
kt_status kt_prepare(kt_runtime* runtime, const char* problem_key, const char* variant,
                     kt_dispatch_info* out);

/* What a runtime has served since it was opened: kernels resolved per grade, where their cubins
 * came from, problems record mode appended, and whether this process loaded NVRTC. */
typedef struct kt_runtime_stats {
  int64_t exact, benchmarked, same_model, same_cc, nearest_shape, predicted, model_default,
      fallback;
  int64_t cubins_from_database; /* kernels loaded from cubins the database held */
  int64_t cubins_compiled;      /* kernels NVRTC compiled for this runtime */
  int64_t problems_recorded;    /* problem lines record mode appended */
  int nvrtc_loaded;             /* nonzero once NVRTC has been loaded in this process */
} kt_runtime_stats;
kt_status kt_runtime_get_stats(kt_runtime* runtime, kt_runtime_stats* out);

/* The last error message of the calling thread ("" when none); valid until the next call. */
const char* kt_last_error(void);
const char* kt_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KERNTUNE_KERNTUNE_H_ */
