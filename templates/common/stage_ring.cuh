// The position of a loop in a ring of shared-memory stages guarded by full/empty mbarriers, as
// the GEMM's and the attention's producers and consumers walk it.
#pragma once

namespace kt {

// The stage of a ring of kStages that the next use takes, and the parity of that use's phase on
// the stage's barriers (the ring's completed passes, mod 2).
template <int kStages>
struct StageRing {
  int stage = 0;
  unsigned int phase = 0;

  // Moves to the next stage; wrapping around flips the phase.
  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

}  // namespace kt
