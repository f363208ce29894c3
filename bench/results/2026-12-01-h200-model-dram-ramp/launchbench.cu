// Diagnostic microbenchmark (twenty-first session): what a decode step's "% of the copy" line
// allows. Timed as `kerntune bench` times (an L2 flush read queued before each launch, events
// around the launch alone, the median of 180): an empty kernel (128 CTAs of 384 threads, without
// and with 220 KB of dynamic shared memory), device-to-device copies (16 B, and 16.5 MB: the
// bench's copy for 64 x 4096^2 moves half of the GEMM's minimum bytes each way), and kernels that
// only read 32 MB (the weights of a 4096^2 layer) with 16-byte loads, several in flight a thread,
// over a few grid shapes: the fastest possible "GEMM" that reads those bytes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                    \
      return 1;                                                               \
    }                                                                         \
  } while (0)

// The protocol's flush (templates/common/l2_flush.cuh): a read of twice L2 through L2, so the
// timed launch starts with L2 holding only clean lines (a write flush leaves it dirty, and the
// launch after it pays for the write-back).
__global__ void flush_kernel(const int4* buf, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;
}

__global__ void empty_kernel(int* out) {
  extern __shared__ int smem[];
  if (out != nullptr && threadIdx.x == 0) out[blockIdx.x] = smem[0];
}

// Each thread keeps kInFlight 16-byte loads outstanding; every CTA reads one contiguous share.
template <int kInFlight>
__global__ void read_kernel(const int4* __restrict__ src, size_t n, int* out) {
  const size_t per_cta = (n + gridDim.x - 1) / gridDim.x;
  const size_t begin = blockIdx.x * per_cta, end = min(n, begin + per_cta);
  int acc = 0;
  for (size_t i = begin + threadIdx.x; i < end; i += size_t(blockDim.x) * kInFlight) {
    int4 v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) {
      const size_t k = i + size_t(j) * blockDim.x;
      v[j] = k < end ? __ldcs(src + k) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int j = 0; j < kInFlight; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  if (acc == 0x7fffffff) out[blockIdx.x] = acc;  // keeps the loads; never true for this data
}

int main() {
  const size_t flush_bytes = 100u << 20, read_bytes = 32u << 20, copy_bytes = 16896u << 10;
  int4 *flush, *src, *dst;
  int* out;
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&src, read_bytes));
  CHECK(cudaMalloc(&dst, copy_bytes));
  CHECK(cudaMalloc(&out, 4096 * sizeof(int)));
  CHECK(cudaMemset(src, 0x3c, read_bytes));
  CHECK(cudaMemset(flush, 0x5a, flush_bytes));
  CHECK(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 << 10));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  auto timed = [&](const char* name, const std::function<void()>& op) {
    std::vector<float> v;
    for (int r = 0; r < 200; ++r) {
      flush_kernel<<<264, 512, 0, s>>>(flush, flush_bytes / 16, out + 4095);
      cudaEventRecord(a, s);
      op();
      cudaEventRecord(b, s);
      cudaEventSynchronize(b);
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      if (r >= 20) v.push_back(ms * 1000);
    }
    std::sort(v.begin(), v.end());
    std::printf("%-44s median %7.2f us  p10 %7.2f  p90 %7.2f\n", name, v[v.size() / 2],
                v[v.size() / 10], v[v.size() * 9 / 10]);
    return v[v.size() / 2];
  };
  timed("empty kernel 128 x 384, no smem", [&] { empty_kernel<<<128, 384, 0, s>>>(nullptr); });
  timed("empty kernel 128 x 384, 220 KB smem",
       [&] { empty_kernel<<<128, 384, 220 << 10, s>>>(nullptr); });
  timed("memcpy DtoD 16 B", [&] { cudaMemcpyAsync(dst, src, 16, cudaMemcpyDeviceToDevice, s); });
  const float copy = timed("memcpy DtoD 16.5 MB (the bench's copy)", [&] {
    cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, s);
  });
  const size_t n = read_bytes / 16;
  struct Shape { int ctas, threads, in_flight; };
  for (const Shape g : {Shape{132, 1024, 4}, Shape{132, 1024, 8}, Shape{264, 1024, 4},
                        Shape{528, 512, 4}, Shape{128, 384, 8}, Shape{1056, 256, 4}}) {
    char name[96];
    std::snprintf(name, sizeof name, "read 32 MB: %d x %d, %d in flight", g.ctas, g.threads,
                  g.in_flight);
    const float t = timed(name, [&] {
      if (g.in_flight == 4) read_kernel<4><<<g.ctas, g.threads, 0, s>>>(src, n, out);
      else read_kernel<8><<<g.ctas, g.threads, 0, s>>>(src, n, out);
    });
    std::printf("%-44s %.1f%% of the copy, %.2f TB/s\n", "", 100 * copy / t, read_bytes / t / 1e6);
  }
  CHECK(cudaGetLastError());
  return 0;
}
