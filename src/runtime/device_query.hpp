// DeviceDesc of a real device, read from the driver; rates come from the built-in profile of
// the same architecture, scaled by SM count and clock.
#pragma once

#include <cuda.h>

#include "core/device_desc.hpp"

namespace kt::rt {

DeviceDesc query_device(CUdevice device);

// query_device of the calling thread's current context's device.
DeviceDesc query_current_device();

}  // namespace kt::rt
