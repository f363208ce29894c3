// A tensor's element strides in a kernel's parameter block: element (b, i, h, d) of a tensor of
// head_dim contiguous elements is at base + b · batch + i · row + h · head + d. Plain types: shared
// verbatim by the host (C++) and the device (NVRTC).
#pragma once

namespace kt {

struct TensorStrides {
  long long batch;
  long long row;  // a sequence position
  long long head;
};

}  // namespace kt
