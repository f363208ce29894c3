// cuBLASLt baseline through dlopen.
#include "ops/gemm/cublaslt_gemm.hpp"

#include <cublasLt.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "core/env.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace kt::tune {

namespace {

struct LtLibrary {
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigGetAttribute) algo_get = nullptr;  // optional
  std::string path;
  std::string failure;
};

template <typename Fn>
bool bind(void* handle, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return fn != nullptr;
}

const LtLibrary& library() {
  static std::once_flag once;
  static LtLibrary lib;
  std::call_once(once, [] {
    std::vector<std::string> candidates = {env::cuda_home() + "/lib64/libcublasLt.so.13",
                                           "libcublasLt.so.13", "libcublasLt.so"};
    if (auto explicit_path = env::cublaslt_library())
      candidates.insert(candidates.begin(), *explicit_path);
    for (const auto& path : candidates) {
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) {
        lib.failure += fmt::format("\n  {}: {}", path, dlerror());
        continue;
      }
      const bool ok = bind(h, "cublasLtCreate", lib.create) &&
                      bind(h, "cublasLtDestroy", lib.destroy) &&
                      bind(h, "cublasLtMatmulDescCreate", lib.desc_create) &&
                      bind(h, "cublasLtMatmulDescDestroy", lib.desc_destroy) &&
                      bind(h, "cublasLtMatmulDescSetAttribute", lib.desc_set) &&
                      bind(h, "cublasLtMatrixLayoutCreate", lib.layout_create) &&
                      bind(h, "cublasLtMatrixLayoutDestroy", lib.layout_destroy) &&
                      bind(h, "cublasLtMatmulPreferenceCreate", lib.pref_create) &&
                      bind(h, "cublasLtMatmulPreferenceDestroy", lib.pref_destroy) &&
                      bind(h, "cublasLtMatmulPreferenceSetAttribute", lib.pref_set) &&
                      bind(h, "cublasLtMatmulAlgoGetHeuristic", lib.heuristic) &&
                      bind(h, "cublasLtMatmul", lib.matmul);
      if (!ok) {
        lib.failure += fmt::format("\n  {}: missing symbols", path);
        continue;
      }
      bind(h, "cublasLtMatmulAlgoConfigGetAttribute", lib.algo_get);
      lib.path = path;
      lib.failure.clear();
      return;
    }
  });
  if (lib.path.empty())
    throw Error(ErrorKind::kNotFound, fmt::format("cannot load cuBLASLt; tried:{}", lib.failure));
  return lib;
}

cudaDataType_t cuda_type(DType d) {
  switch (d) {
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kFP16:
      return CUDA_R_16F;
    case DType::kFP32:
      return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

void check_lt(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::kUnsupported,
                fmt::format("{} failed with cuBLAS status {}", call, int(s)));
}

}  // namespace

struct CublasLtGemm::Impl {
  const LtLibrary& lib = library();
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout_first = nullptr, layout_second = nullptr, layout_c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t algo{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  float alpha = 1.0f, beta = 0.0f;

  ~Impl() {
    if (pref) lib.pref_destroy(pref);
    if (layout_c) lib.layout_destroy(layout_c);
    if (layout_second) lib.layout_destroy(layout_second);
    if (layout_first) lib.layout_destroy(layout_first);
    if (desc) lib.desc_destroy(desc);
    if (handle) lib.destroy(handle);
  }
};

CublasLtGemm::CublasLtGemm(const GemmProblem& p, void* workspace, std::size_t workspace_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.workspace = workspace;
  s.workspace_bytes = workspace_bytes;
  check_lt(s.lib.create(&s.handle), "cublasLtCreate");
  check_lt(s.lib.desc_create(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  // Column-major view: C^T (N x M) = op(B^T) (N x K) · A^T (K x M).
  const cublasOperation_t trans_first = p.layout == Layout::kNT ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_second = CUBLAS_OP_N;
  check_lt(s.lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_first, sizeof(trans_first)),
           "cublasLtMatmulDescSetAttribute(TRANSA)");
  check_lt(s.lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_second, sizeof(trans_second)),
           "cublasLtMatmulDescSetAttribute(TRANSB)");
  const cudaDataType_t in = cuda_type(p.in_dtype), out = cuda_type(p.out_dtype);
  if (p.layout == Layout::kNT)
    check_lt(s.lib.layout_create(&s.layout_first, in, p.k, p.n, p.k),
             "cublasLtMatrixLayoutCreate(B)");
  else
    check_lt(s.lib.layout_create(&s.layout_first, in, p.n, p.k, p.n),
             "cublasLtMatrixLayoutCreate(B)");
  check_lt(s.lib.layout_create(&s.layout_second, in, p.k, p.m, p.k),
           "cublasLtMatrixLayoutCreate(A)");
  check_lt(s.lib.layout_create(&s.layout_c, out, p.n, p.m, p.n), "cublasLtMatrixLayoutCreate(C)");
  check_lt(s.lib.pref_create(&s.pref), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t ws = workspace_bytes;
  check_lt(s.lib.pref_set(s.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
           "cublasLtMatmulPreferenceSetAttribute");
  int found = 0;
  check_lt(s.lib.heuristic(s.handle, s.desc, s.layout_first, s.layout_second, s.layout_c,
                           s.layout_c, s.pref, 1, &s.algo, &found),
           "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw Error(ErrorKind::kUnsupported,
                fmt::format("cuBLASLt has no algorithm for {}", to_key(p)));
}

CublasLtGemm::~CublasLtGemm() = default;

CUresult CublasLtGemm::launch(const void* a, const void* b, void* c, CUstream stream) const {
  const Impl& s = *impl_;
  const cublasStatus_t status =
      s.lib.matmul(s.handle, s.desc, &s.alpha, b, s.layout_first, a, s.layout_second, &s.beta, c,
                   s.layout_c, c, s.layout_c, &s.algo.algo, s.workspace, s.workspace_bytes,
                   reinterpret_cast<cudaStream_t>(stream));
  if (status != CUBLAS_STATUS_SUCCESS) {
    logger().error("cublasLtMatmul failed with status {}", int(status));
    return CUDA_ERROR_LAUNCH_FAILED;
  }
  return CUDA_SUCCESS;
}

std::string CublasLtGemm::algorithm() const {
  const Impl& s = *impl_;
  if (s.lib.algo_get == nullptr) return "";
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto value) -> long long {
    std::size_t written = 0;
    if (s.lib.algo_get(&s.algo.algo, attr, &value, sizeof(value), &written) !=
        CUBLAS_STATUS_SUCCESS)
      return -1;
    return static_cast<long long>(value);
  };
  return fmt::format("id={} tile={} stages={} splitk={} reduction={} swizzle={} cluster={}",
                     get(CUBLASLT_ALGO_CONFIG_ID, std::int32_t{}),
                     get(CUBLASLT_ALGO_CONFIG_TILE_ID, std::uint32_t{}),
                     get(CUBLASLT_ALGO_CONFIG_STAGES_ID, std::uint32_t{}),
                     get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, std::uint32_t{}),
                     get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, std::uint32_t{}),
                     get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, std::uint32_t{}),
                     get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, std::uint16_t{}));
}

std::string CublasLtGemm::library_path() {
  try {
    return library().path;
  } catch (const Error&) {
    return "";
  }
}

}  // namespace kt::tune
