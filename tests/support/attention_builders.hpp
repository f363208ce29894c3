// Terse builders of attention configs for the tests of every tier, and the fa3 configs we ship.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attention_config.hpp"

namespace kt::testing {

// An fa3 (sm90) config: warps is 0, block_m sets the warpgroups.
inline AttentionConfig fa3_config(int bm, int bn, int stages, bool pingpong = false) {
  return AttentionConfig{bm, bn, 0, stages, AttentionFamily::kSm90, pingpong};
}

struct ShippedAttentionConfig {
  std::int64_t head_dim;
  AttentionConfig config;
};

// The fa3 configs we ship as known-good starting points, per head dim and for both masks: the
// H200 winners of 2026-12-03 (three consumers taking turns at d = 64, two at d = 128, 64-key blocks
// at d = 256 for registers; bench/NOTES.md, "Attention"), the same tiles without ping-pong, one
// consumer for short sequences, and 64-key blocks over three stages at d = 128. The nvrtc tier
// compiles each for sm_90a without spills; the gpu tier checks each.
inline const std::vector<ShippedAttentionConfig>& shipped_fa3_configs() {
  static const std::vector<ShippedAttentionConfig> all = {
      {64, fa3_config(128, 128, 2)},        {64, fa3_config(64, 128, 2)},
      {64, fa3_config(192, 128, 2, true)},  {128, fa3_config(128, 128, 2)},
      {128, fa3_config(128, 128, 2, true)}, {128, fa3_config(128, 128, 3, true)},
      {128, fa3_config(64, 128, 2)},        {128, fa3_config(128, 64, 3)},
      {256, fa3_config(128, 64, 2)},        {256, fa3_config(128, 64, 2, true)},
      {128, fa3_config(64, 64, 3)}};
  return all;
}

}  // namespace kt::testing
