// Diagnostic microbenchmark (nineteenth session): how fast one SM moves a split-K partial tile
// out and in. One CTA per SM (200 KB of dynamic shared memory), each moving `bytes` to or from its
// own region; thread 0 stamps %globaltimer before the first copy and after the last completes.
// Modes: bulk store smem -> global; 256 threads' st.global.v4 then a GPU-scope fence; bulk load
// global -> smem of a region another CTA stored in the previous launch; 256 threads' ld.global.cg
// of the same; bulk push smem -> the cluster peer's smem (clusters of 2); 256 threads'
// st.shared::cluster.v4 to the peer, then a cluster barrier.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{.reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0,1,0,p;}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
}

enum Mode { kBulkStore, kThreadStore, kBulkLoad, kThreadLoad, kDsmemBulk, kDsmemThread, kBulkStoreRelease, kFenceOnly, kStRelNoProxy, kProxyRelaxed, kProxyOnly, kAcqRelRelaxed, kPollFence, kPollAcquire, kPollProxy, kPoll7Fence, kPoll7Acquire, kNumModes };

extern "C" __global__ void __launch_bounds__(256) move(int mode, int bytes, int chunk, float* buf,
                                                       int shift, unsigned long long* stamps,
                                                       float* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bar;
  const int cta = blockIdx.x, g = gridDim.x, t = threadIdx.x;
  float* mine = buf + size_t(cta) * bytes / 4;
  float* other = buf + size_t((cta + shift) % g) * bytes / 4;
  const unsigned s = smem_addr(smem), b = smem_addr(&bar);
  for (int i = t; i < bytes / 4; i += 256) reinterpret_cast<float*>(smem)[i] = float(i + cta);
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (mode == kDsmemBulk || mode == kDsmemThread) cluster_sync_all(); else __syncthreads();
  unsigned long long t0 = now();
  float acc = 0;
  switch (mode) {
    case kBulkStore:
      if (t == 0) {
        for (int o = 0; o < bytes; o += chunk)
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                           reinterpret_cast<char*>(mine) + o),
                       "r"(s + o), "r"(chunk)
                       : "memory");
        asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;" ::: "memory");
      }
      break;
    case kBulkStoreRelease:
      if (t == 0) {
        for (int o = 0; o < bytes; o += chunk)
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                           reinterpret_cast<char*>(mine) + o),
                       "r"(s + o), "r"(chunk)
                       : "memory");
        asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;" ::: "memory");
        asm volatile("fence.proxy.async.global;" ::: "memory");
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(sink + 2 + cta % 2), "r"(1u)
                     : "memory");
      }
      break;
    case kFenceOnly:
      if (t == 0) {
        asm volatile("fence.proxy.async.global;" ::: "memory");
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(sink + 2 + cta % 2), "r"(1u)
                     : "memory");
        unsigned v;
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(sink + 4) : "memory");
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        acc += float(v);
      }
      break;
    case kStRelNoProxy: case kProxyRelaxed: case kProxyOnly: case kAcqRelRelaxed:
      if (t == 0) {
        for (int o = 0; o < bytes; o += chunk)
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                           reinterpret_cast<char*>(mine) + o),
                       "r"(s + o), "r"(chunk)
                       : "memory");
        asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;" ::: "memory");
        const unsigned long long tw = now();
        stamps[2 * g + cta] = tw - t0;
        if (mode == kStRelNoProxy)
          asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(sink + 2 + cta % 2), "r"(1u) : "memory");
        if (mode == kProxyRelaxed || mode == kProxyOnly)
          asm volatile("fence.proxy.async.global;" ::: "memory");
        if (mode == kProxyRelaxed)
          asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(sink + 2 + cta % 2), "r"(1u) : "memory");
        if (mode == kAcqRelRelaxed) {
          asm volatile("fence.acq_rel.gpu;" ::: "memory");
          asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(sink + 2 + cta % 2), "r"(1u) : "memory");
        }
      }
      break;
    case kPollFence: case kPollAcquire: case kPollProxy:
      if (t == 0) {
        unsigned v;
        if (mode == kPollAcquire)
          asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(sink + 4 + cta % 2) : "memory");
        else
          asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(sink + 4 + cta % 2) : "memory");
        acc += float(v);
        const unsigned long long tw = now();
        stamps[2 * g + cta] = tw - t0;
        if (mode == kPollFence) asm volatile("fence.acq_rel.gpu;" ::: "memory");
        if (mode == kPollProxy) asm volatile("fence.proxy.async.global;" ::: "memory");
      }
      break;
    case kPoll7Fence: case kPoll7Acquire:
      if (t == 0) {
        unsigned v[7];
#pragma unroll
        for (int i = 0; i < 7; ++i) {
          if (mode == kPoll7Acquire)
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v[i]) : "l"(sink + 4 + 32 * i) : "memory");
          else
            asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v[i]) : "l"(sink + 4 + 32 * i) : "memory");
        }
#pragma unroll
        for (int i = 0; i < 7; ++i) acc += float(v[i]);
        if (mode == kPoll7Fence) asm volatile("fence.acq_rel.gpu;" ::: "memory");
        stamps[2 * g + cta] = 0;
      }
      break;
    case kThreadStore: {
      const float4* src = reinterpret_cast<const float4*>(smem);
      float4* dst = reinterpret_cast<float4*>(mine);
      for (int i = t; i < bytes / 16; i += 256) dst[i] = src[i];
      asm volatile("fence.acq_rel.gpu;" ::: "memory");
      __syncthreads();
      break;
    }
    case kBulkLoad:
      if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes)
                     : "memory");
        for (int o = 0; o < bytes; o += chunk)
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
              "[%3];" ::"r"(s + o),
              "l"(reinterpret_cast<const char*>(other) + o), "r"(chunk), "r"(b)
              : "memory");
        mbar_wait(b, 0);
      }
      break;
    case kThreadLoad: {
      const float4* src = reinterpret_cast<const float4*>(other);
      for (int i = t; i < bytes / 16; i += 256) {
        float4 v;
        asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                     : "l"(src + i));
        acc += v.x + v.y + v.z + v.w;
      }
      __syncthreads();
      break;
    }
    case kDsmemBulk: {
      unsigned rank;
      asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
      const unsigned peer = rank ^ 1u;
      const int half = bytes;  // pushed from [0, bytes) into the peer's [bytes, 2 bytes)
      if (t == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(half)
                     : "memory");
      }
      cluster_sync_all();  // both expect_tx posted
      t0 = now();
      if (t == 0) {
        const unsigned dst = mapa(s + half, peer), rbar = mapa(b, peer);
        for (int o = 0; o < half; o += chunk)
          asm volatile(
              "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], "
              "%2, [%3];" ::"r"(dst + o),
              "r"(s + o), "r"(chunk), "r"(rbar)
              : "memory");
        mbar_wait(b, 0);
      }
      cluster_sync_all();  // no CTA exits while its peer still writes into it
      break;
    }
    case kDsmemThread: {
      unsigned rank;
      asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
      const unsigned dst = mapa(s + bytes, rank ^ 1u);
      for (int i = t; i < bytes / 16; i += 256) {
        const float4 v = reinterpret_cast<const float4*>(smem)[i];
        asm volatile("st.shared::cluster.v4.f32 [%0], {%1,%2,%3,%4};" ::"r"(dst + 16 * i),
                     "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                     : "memory");
      }
      cluster_sync_all();
      break;
    }
  }
  const unsigned long long t1 = now();
  if (t == 0) {
    stamps[2 * cta] = t0;
    stamps[2 * cta + 1] = t1;
  }
  if (acc == 1234.5f) sink[0] = acc;
}

// Reads `n` float4s through L2 (.cg), leaving it full of clean lines (the bench's flush).
extern "C" __global__ void flush_l2(const float4* p, long long n, float* sink) {
  float acc = 0;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p + i));
    acc += v.x;
  }
  if (acc == 1234.5f) sink[1] = acc;
}

#define CK(x)                                                               \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      std::printf("%s: %s (line %d)\n", #x, cudaGetErrorString(e), __LINE__); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main() {
  const char* names[] = {"bulk store", "thread st.global", "bulk load", "thread ld.cg",
                         "dsmem bulk push", "dsmem thread st", "bulk st+release", "fences only",
                         "st.release only", "proxy+st.relaxed", "proxy fence only", "acq_rel+st.relaxed",
                         "ld.relaxed+acq_rel", "ld.acquire", "ld.relaxed+proxy", "7 ld.relaxed+acq_rel", "7 ld.acquire"};
  const int smem = 200 * 1024;
  CK(cudaFuncSetAttribute(move, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(move, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  float *buf, *sink, *flush;
  unsigned long long* stamps;
  const size_t max_bytes = 128ull * 96 * 1024;
  CK(cudaMalloc(&buf, max_bytes));
  CK(cudaMalloc(&sink, 4096));
  CK(cudaMemset(sink, 0, 4096));
  CK(cudaMalloc(&stamps, 3 * 132 * 8));
  const size_t flush_bytes = 200ull << 20;
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMemset(buf, 0, max_bytes));
  CK(cudaMemset(flush, 1, flush_bytes));
  std::printf("%-18s %5s %7s %6s | %9s %9s %9s | %8s\n", "mode", "CTAs", "bytes", "chunk",
              "p10 ns", "median ns", "max ns", "GB/s/SM");
  for (int g : {128, 32}) {
    for (int bytes : {28672, 57344}) {
      for (int mode = 0; mode < kNumModes; ++mode) {
        if ((mode == kDsmemBulk || mode == kDsmemThread) && g != 128) continue;
        for (int chunk : {4096, 16384}) {
          if ((mode == kThreadStore || mode == kThreadLoad || mode == kDsmemThread || mode >= kFenceOnly) && chunk != 4096)
            continue;
          if (bytes % chunk != 0) continue;
          std::vector<double> med;
          for (int rep = 0; rep < 5; ++rep) {
            flush_l2<<<264, 256>>>(reinterpret_cast<const float4*>(flush), flush_bytes / 16, sink);
            if (mode == kBulkLoad || mode == kThreadLoad) {  // others' partials, just written
              move<<<g, 256, smem>>>(kBulkStore, bytes, 4096, buf, 0, stamps, sink);
              CK(cudaGetLastError());
            }
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(g);
            cfg.blockDim = dim3(256);
            cfg.dynamicSmemBytes = smem;
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = mode == kDsmemBulk || mode == kDsmemThread ? 2 : 1;
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            CK(cudaLaunchKernelEx(&cfg, move, mode, bytes, chunk, buf, 16, stamps, sink));
            CK(cudaDeviceSynchronize());
            std::vector<unsigned long long> h(3 * g);
            CK(cudaMemcpy(h.data(), stamps, 3 * g * 8, cudaMemcpyDeviceToHost));
            std::vector<double> d(g);
            for (int i = 0; i < g; ++i) d[i] = double(h[2 * i + 1] - h[2 * i]);
            std::sort(d.begin(), d.end());
            med.push_back(d[g / 2]);
            std::vector<double> pre(g);
            for (int i = 0; i < g; ++i) pre[i] = double(h[2 * g + i]);
            std::sort(pre.begin(), pre.end());
            if (rep == 4)
              std::printf("%-18s %5d %7d %6d | %9.0f %9.0f %9.0f | %8.1f | before the tail %6.0f\n",
                          names[mode], g, bytes, chunk, d[g / 10], d[g / 2], d[g - 1],
                          bytes / d[g / 2], mode >= kStRelNoProxy ? pre[g / 2] : 0.0);
          }
        }
      }
    }
  }
  return 0;
}
