// How one kernel is launched: grid, block, dynamic shared memory, cluster shape.
#pragma once

#include <array>
#include <cstdint>

namespace kt {

struct LaunchPlan {
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::uint32_t smem_bytes = 0;  // dynamic shared memory
  std::array<std::uint32_t, 3> cluster{1, 1, 1};

  std::int64_t num_ctas() const { return std::int64_t(grid[0]) * grid[1] * grid[2]; }
  std::uint32_t num_threads() const { return block[0] * block[1] * block[2]; }
};

}  // namespace kt
