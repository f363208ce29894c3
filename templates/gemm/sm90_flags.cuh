// The sm90 GEMM workspace's flag region (split-K and stream-K; see sm90_split_k_serial.cuh): its
// layout, the launch epoch every flag carries, and the spins that wait for other units' flags.
#pragma once

#include "kerntune/common/ptx_sm90.cuh"

namespace kt {
namespace sm90 {

// Words of params.flags ahead of the ready flags: [0] the epoch of the last launch that used the
// workspace, [1] the count of this launch's CTAs that have read it; padded to a 128-byte line.
constexpr int kFlagHeaderWords = 32;
// Words of the flag region (kGemmFlagRegionBytes / 4 on the host). The host checks that the
// serial mode's flags fit; the distributed mode's last-split flags come after them.
constexpr int kFlagRegionWords = 16384;

// One thread per CTA (of the producer warpgroup's idle warp 1, off the loads' and the consumers'
// paths): reads the last launch's epoch, keeps this launch's (one more, skipping 0, the value of
// a flag never written, when it wraps) in the shared word `epoch_word` for the CTA's threads
// (published by an arrival on the mbarrier `epoch_bar`, count 1: see load_epoch), and counts the
// CTA in; the last CTA of the grid to arrive resets the count and stores the new epoch as the
// last launch's, for the next launch.
// Every CTA's read of flags[0] happens before that store (the read, then in program order the
// same thread's acq_rel arrival, which the last arrival acquires through the chain of RMWs), so
// no CTA of this launch reads the new value.
__device__ __forceinline__ void begin_launch(unsigned int* flags, unsigned int epoch_bar,
                                             unsigned int epoch_word, unsigned int ctas) {
  unsigned int epoch = ld_relaxed_gpu(flags) + 1u;
  if (epoch == 0u) epoch = 1u;
  st_shared_4(epoch_word, epoch);
  mbarrier_arrive(epoch_bar);
  if (atom_add_acq_rel_gpu(flags + 1, 1u) == ctas - 1u) {
    st_relaxed_gpu(flags + 1, 0u);
    st_relaxed_gpu(flags, epoch);
  }
}

// This launch's epoch, once begin_launch has published it: phase 0 of `epoch_bar` completes once
// and never again in the launch, so waiting on its parity 0 returns at once after that, and the
// wait (acquire at CTA scope) makes the word's store visible. Read where it is needed rather
// than kept in a register.
__device__ __forceinline__ unsigned int load_epoch(unsigned int epoch_bar,
                                                   unsigned int epoch_word) {
  mbarrier_wait(epoch_bar, 0);
  return ld_shared_4(epoch_word);
}

// Spins until the ready flag holds this launch's epoch (acquire: the partial sums it publishes
// are visible to this thread's loads after it), backing off from 32 to 256 ns. The epoch is read
// from shared memory here rather than held in a register: the 128-accumulator tiles have none
// to spare around the reduction.
__device__ __forceinline__ void wait_flag(const unsigned int* flag, unsigned int epoch_bar,
                                          unsigned int epoch_word) {
  const unsigned int epoch = load_epoch(epoch_bar, epoch_word);
  unsigned int backoff = 32;
  while (ld_acquire_gpu(flag) != epoch) {
    nanosleep_ns(backoff);
    if (backoff < 256) backoff *= 2;
  }
}

// Spins until the flags of splits 0 .. splits - 1 but `skip` (flag z at flag0 + z * stride) all
// hold this launch's epoch, polling eight at a time with relaxed loads issued together (one
// round trip per poll, not one per split), then fences: relaxed loads that observed the release
// stores, followed by fence.acq_rel, acquire what each flag published.
__device__ __forceinline__ void wait_flags(const unsigned int* flag0, int stride, int splits,
                                           int skip, unsigned int epoch_bar,
                                           unsigned int epoch_word) {
  constexpr int kPoll = 8;
  const unsigned int epoch = load_epoch(epoch_bar, epoch_word);
  unsigned int backoff = 32;
#pragma unroll 1
  for (int z0 = 0; z0 < splits; z0 += kPoll) {
#pragma unroll 1
    for (;;) {
      unsigned int v[kPoll];
#pragma unroll
      for (int i = 0; i < kPoll; ++i)
        v[i] =
            z0 + i < splits && z0 + i != skip ? ld_relaxed_gpu(flag0 + (z0 + i) * stride) : epoch;
      bool ready = true;
#pragma unroll
      for (int i = 0; i < kPoll; ++i) ready = ready && v[i] == epoch;
      if (ready) break;
      nanosleep_ns(backoff);
      if (backoff < 256) backoff *= 2;
    }
  }
  fence_acq_rel_gpu();
}

}  // namespace sm90
}  // namespace kt
