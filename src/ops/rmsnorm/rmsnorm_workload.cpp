// RMSNorm's tuner facet: x, w (and r) on fresh random data, y poisoned before every checked run,
// a float64 reference on sampled rows (the first, the last and random ones), and a count of
// non-finite values over all of y. The residual's sum is written over r in place, the call fused
// add-RMSNorm layers make (and the Python entry's default), which runs slower than a sum written
// apart for some configs (bench/NOTES.md, "RMSNorm"): r is a working copy, restored from the
// drawn values before every checked run. The sum, which cannot be poisoned in place, is checked
// on the sampled rows (every column of them); y's poison covers every row.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "core/error.hpp"
#include "generator/generated_source.hpp"
#include "ops/rmsnorm/rmsnorm_config.hpp"
#include "ops/rmsnorm/rmsnorm_op.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/kernel_launch.hpp"
#include "runtime/op_launcher.hpp"
#include "tuner/op_tuning.hpp"

namespace kt {

namespace {

constexpr int kRandomRows = 62;
constexpr std::uint32_t kThreads = 256;
enum CheckKernel { kFillRandom = 0, kFillPoison, kCountNonfinite };

// ||out - ref|| / ||ref|| bound: the output's rounding plus FP32 accumulation order.
double rmsnorm_tolerance(DType dtype) { return dtype == DType::kFP16 ? 2e-3 : 1e-2; }

double to_double(std::uint16_t bits, DType dtype) {
  if (dtype == DType::kBF16) {
    const std::uint32_t word = std::uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &word, sizeof f);
    return f;
  }
  const int exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

class RmsnormTarget final : public tune::BenchTarget {
 public:
  explicit RmsnormTarget(const tune::BenchTargetArgs& a)
      : problem_(parse_rmsnorm_key(a.problem_key)),
        modules_(*a.modules),
        stream_(a.stream),
        elements_(problem_.rows * problem_.hidden),
        x_(bytes(elements_)),
        w_(bytes(problem_.hidden)),
        y_(bytes(elements_)),
        count_(sizeof(unsigned long long)) {
    if (problem_.residual) {
      r_ = rt::DeviceBuffer(bytes(elements_));
      drawn_r_ = rt::DeviceBuffer(bytes(elements_));
    }
    const std::string_view type = device_type_name(problem_.dtype);
    const KernelSource checks{
        fmt::format("rmsnorm_check.{}", to_string(problem_.dtype)),
        {"kerntune/gemm/gemm_check.cuh"},
        {fmt::format("kt::fill_random<{}>", type), fmt::format("kt::fill_poison<{}>", type),
         fmt::format("kt::gather_and_count_nonfinite<{}>", type)}};
    check_module_ = &modules_.load(
        rt::get_or_compile(a.db, gen::generate(checks, a.device.arch()), true, a.db != nullptr)
            .record);
    fill(x_, elements_, a.seed * 3 + 1);
    fill(w_, problem_.hidden, a.seed * 3 + 2);
    if (problem_.residual) fill(drawn_r_, elements_, a.seed * 3 + 3);
    tensors_ = {x_.data(),
                w_.data(),
                y_.data(),
                problem_.residual ? r_.data() : nullptr,
                problem_.residual ? r_.data() : nullptr,
                1e-6f};

    std::mt19937_64 rng(a.seed ^ 0x726d736e6f726dULL);
    rows_ = {0, problem_.rows - 1};
    for (int i = 0; i < kRandomRows && problem_.rows > 2; ++i)
      rows_.push_back(std::uniform_int_distribution<std::int64_t>(1, problem_.rows - 2)(rng));
    std::sort(rows_.begin(), rows_.end());
    rows_.erase(std::unique(rows_.begin(), rows_.end()), rows_.end());
    rt::check(rt::driver().stream_synchronize(stream_), "cuStreamSynchronize(rmsnorm inputs)");
    reference();
  }

  void load(const std::string& config_key, const cache::CubinRecord& cubin) override {
    if (kernels_.count(config_key)) return;
    kernels_[config_key] = launcher_->load(to_key(problem_), config_key, modules_.load(cubin));
  }
  CUresult launch(const std::string& config_key, CUstream stream, int) override {
    return kernels_.at(config_key)->launch(&tensors_, 0, stream);
  }
  int num_operand_sets() const override { return 1; }

  void poison_output() override {
    poison(y_);
    if (problem_.residual)
      rt::check(rt::driver().memcpy_dtod_async(r_.get(), drawn_r_.get(), bytes(elements_), stream_),
                "cuMemcpyDtoDAsync(rmsnorm residual)");
  }

  tune::OutputCheck check_output() override {
    tune::OutputCheck check;
    check.tolerance = rmsnorm_tolerance(problem_.dtype);
    check.nonfinite = count_nonfinite(y_) + (problem_.residual ? count_nonfinite(r_) : 0);
    double err = 0, norm = 0;
    const auto compare = [&](const rt::DeviceBuffer& out, const std::vector<double>& ref) {
      std::vector<std::uint16_t> row(problem_.hidden);
      for (std::size_t i = 0; i < rows_.size(); ++i) {
        copy_row(out, rows_[i], row);
        for (std::int64_t j = 0; j < problem_.hidden; ++j) {
          const double d = to_double(row[j], problem_.dtype) - ref[i * problem_.hidden + j];
          err += d * d;
          norm += ref[i * problem_.hidden + j] * ref[i * problem_.hidden + j];
        }
      }
    };
    compare(y_, reference_y_);
    // A kernel that writes no sum leaves r, which the reference sum x + r tells apart.
    if (problem_.residual) compare(r_, reference_sum_);
    check.relative_error = std::sqrt(err / std::max(norm, 1e-300));
    check.passed = check.nonfinite == 0 && check.relative_error <= check.tolerance;
    if (check.nonfinite != 0)
      check.detail =
          fmt::format("{} non-finite outputs (poison left: elements not written)", check.nonfinite);
    else if (!check.passed)
      check.detail = fmt::format("relative error {:.3g} over {} sampled rows exceeds {:.3g}",
                                 check.relative_error, rows_.size(), check.tolerance);
    return check;
  }

 private:
  std::size_t bytes(std::int64_t elements) const {
    return std::size_t(elements) * size_bytes(problem_.dtype);
  }
  void launch_check(int kernel, std::uint32_t blocks, void** args) {
    rt::check(rt::launch_with_plan(check_module_->functions[kernel],
                                   rt::linear_plan(blocks, kThreads), args, stream_),
              "cuLaunchKernel(rmsnorm check)");
  }
  static std::uint32_t blocks_for(std::int64_t n) {
    return std::uint32_t(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 65535));
  }
  void fill(const rt::DeviceBuffer& b, std::int64_t n, unsigned long long seed) {
    CUdeviceptr p = b.get();
    long long count = n;
    float scale = 1.0f;
    void* args[] = {&p, &count, &seed, &scale};
    launch_check(kFillRandom, blocks_for(n), args);
  }
  void poison(const rt::DeviceBuffer& b) {
    CUdeviceptr p = b.get();
    long long count = elements_;
    void* args[] = {&p, &count};
    launch_check(kFillPoison, blocks_for(elements_), args);
  }
  std::uint64_t count_nonfinite(const rt::DeviceBuffer& b) {
    const rt::CudaDriver& d = rt::driver();
    rt::check(d.memset_d8_async(count_.get(), 0, sizeof(unsigned long long), stream_),
              "cuMemsetD8Async(count)");
    CUdeviceptr p = b.get(), none = 0, count = count_.get();
    long long ld = problem_.hidden;
    int m = int(problem_.rows), n = int(problem_.hidden), samples = 0;
    void* args[] = {&p, &ld, &m, &n, &none, &none, &samples, &none, &count};
    launch_check(kCountNonfinite, std::uint32_t(std::min<std::int64_t>(problem_.rows, 65535)),
                 args);
    unsigned long long host = 0;
    rt::check(d.stream_synchronize(stream_), "cuStreamSynchronize(rmsnorm check)");
    rt::check(d.memcpy_dtoh(&host, count, sizeof host), "cuMemcpyDtoH(count)");
    return host;
  }
  void copy_row(const rt::DeviceBuffer& b, std::int64_t row, std::vector<std::uint16_t>& out) {
    rt::check(rt::driver().memcpy_dtoh(out.data(), b.get() + bytes(row * problem_.hidden),
                                       bytes(problem_.hidden)),
              "cuMemcpyDtoH(rmsnorm row)");
  }
  // y (and the sum) of the sampled rows in float64 from the rows as stored.
  void reference() {
    const std::int64_t h = problem_.hidden;
    std::vector<std::uint16_t> w(h), x(h), r(h);
    rt::check(rt::driver().memcpy_dtoh(w.data(), w_.get(), bytes(h)), "cuMemcpyDtoH(weight)");
    for (std::int64_t row : rows_) {
      copy_row(x_, row, x);
      if (problem_.residual) copy_row(drawn_r_, row, r);
      std::vector<double> s(h);
      double squares = 0;
      for (std::int64_t j = 0; j < h; ++j) {
        s[j] = to_double(x[j], problem_.dtype) +
               (problem_.residual ? to_double(r[j], problem_.dtype) : 0.0);
        squares += s[j] * s[j];
      }
      const double scale = 1.0 / std::sqrt(squares / double(h) + 1e-6);
      for (std::int64_t j = 0; j < h; ++j) {
        reference_y_.push_back(s[j] * scale * to_double(w[j], problem_.dtype));
        if (problem_.residual) reference_sum_.push_back(s[j]);
      }
    }
  }

  RmsnormProblem problem_;
  rt::ModuleCache& modules_;
  CUstream stream_;
  std::int64_t elements_;
  rt::DeviceBuffer x_, w_, y_, r_, drawn_r_, count_;
  const rt::LoadedModule* check_module_ = nullptr;
  RmsnormTensors tensors_;
  std::vector<std::int64_t> rows_;
  std::vector<double> reference_y_, reference_sum_;
  std::shared_ptr<const rt::OpLauncher> launcher_ = make_rmsnorm_launcher();
  std::map<std::string, std::unique_ptr<rt::OpKernel>> kernels_;
};

class RmsnormTuning final : public tune::OpTuning {
 public:
  std::unique_ptr<tune::BenchTarget> make_bench_target(
      const tune::BenchTargetArgs& args) const override {
    return std::make_unique<RmsnormTarget>(args);
  }
};

}  // namespace

std::shared_ptr<const tune::OpTuning> make_rmsnorm_tuning() {
  return std::make_shared<RmsnormTuning>();
}

}  // namespace kt
