// Shared fixture of the gpu tier: binds the primary context of device 0 and skips the test
// when there is no usable GPU, so the tier stays green on CPU-only machines.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "runtime/context.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"

namespace kt::testing {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!rt::gpu_available(&reason)) GTEST_SKIP() << "no GPU: " << reason;
    context_.emplace(0);
    device_ = rt::query_device(context_->device());
  }

  std::optional<rt::BoundContext> context_;
  DeviceDesc device_;
};

}  // namespace kt::testing
