// Attention tuning workload: random inputs, poison, sampled FP32 reference rows.
#include "ops/attention/attention_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "attention/attention_params.h"
#include "core/arith.hpp"
#include "generator/generated_source.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/attention/attention_source.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/host_copy.hpp"
#include "runtime/kernel_launch.hpp"
#include "tuner/gathered_samples.hpp"

namespace kt::tune {

namespace {

constexpr std::int64_t kMaxRows = 192;
constexpr double kLseTolerance = 2e-2;  // natural-log units, with bf16 scores

std::uint32_t blocks_for(std::int64_t items, std::uint32_t threads, std::uint32_t cap) {
  return std::uint32_t(std::clamp<std::int64_t>(ceil_div(items, threads), 1, cap));
}

}  // namespace

double attention_tolerance(DType dtype) { return dtype == DType::kBF16 ? 2e-2 : 5e-3; }

AttentionWorkload::AttentionWorkload(const AttentionProblem& p, const DeviceDesc& device,
                                     cache::Database* db, rt::ModuleCache& modules, CUstream stream,
                                     std::uint64_t seed, AttentionLayout layout,
                                     float softmax_scale)
    : problem_(p),
      stream_(stream),
      rows_q_(p.varlen ? p.total_q : p.batch * p.seqlen_q),
      rows_k_(p.varlen ? p.total_k : p.batch * p.seqlen_k),
      q_(std::size_t(rows_q_ * p.heads_q * p.head_dim) * 2),
      k_(std::size_t(rows_k_ * p.heads_kv * p.head_dim) * 2),
      v_(std::size_t(rows_k_ * p.heads_kv * p.head_dim) * 2),
      o_(std::size_t(rows_q_ * p.heads_q * p.head_dim) * 2),
      lse_(std::size_t(rows_q_ * p.heads_q) * 4) {
  if (layout == AttentionLayout::kBNHD)
    tensors_.set_bnhd_strides(p);
  else
    tensors_.set_bhnd_strides(p);
  if (p.varlen) set_packed(layout);
  tensors_.q = q_.data();
  tensors_.k = k_.data();
  tensors_.v = v_.data();
  tensors_.o = o_.data();
  tensors_.lse = static_cast<float*>(lse_.data());
  tensors_.softmax_scale = softmax_scale;
  module_ = &modules.load(
      rt::get_or_compile(db, gen::generate_attention_check(p, device.arch()), true, db != nullptr)
          .record);

  // Sampled rows r = (b * heads_q + h) * seqlen_q + i: first and last rows, rows around
  // 64-row block edges, and uniform ones.
  std::mt19937_64 rng(seed ^ 0x617474656e74ULL);
  auto pick = [&rng](std::int64_t n) {
    return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
  };
  // Packed batches sample each sequence's own rows (r still counts seqlen_q, the longest, per
  // head; the check kernels find the sequence from cu_seqlens).
  const std::int64_t total = p.batch * p.heads_q * p.seqlen_q;
  for (std::int64_t x = 0; x < std::min(total, kMaxRows); ++x) {
    const std::int64_t bh = pick(p.batch * p.heads_q);
    const std::int64_t length = seqlen_q_of(bh / p.heads_q);
    std::int64_t i = pick(length);
    if (x % 4 == 0) i = 0;
    if (x % 4 == 1) i = length - 1;
    if (x % 4 == 2) i = std::min(length - 1, (pick(length) / 64) * 64 + 63);
    rows_.push_back(int(bh * p.seqlen_q + i));
  }
  if (total <= kMaxRows) {
    rows_.clear();
    for (std::int64_t r = 0; r < total; ++r)
      if (r % p.seqlen_q < seqlen_q_of(r / p.seqlen_q / p.heads_q)) rows_.push_back(int(r));
  }
  const std::size_t n = rows_.size();
  const std::size_t values = n * std::size_t(p.head_dim);
  rows_device_ = rt::DeviceBuffer(n * sizeof(int));
  reference_device_ = rt::DeviceBuffer(values * sizeof(float));
  reference_lse_device_ = rt::DeviceBuffer(n * sizeof(float));
  gathered_device_ = rt::DeviceBuffer(values * sizeof(float));
  count_device_ = rt::DeviceBuffer(sizeof(unsigned long long));
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.memcpy_htod(rows_device_.get(), rows_.data(), n * sizeof(int)), "cuMemcpyHtoD(rows)");

  float scale = 1.0f;
  const struct {
    const rt::DeviceBuffer* buffer;
    std::uint64_t salt;
  } inputs[] = {{&q_, 1}, {&k_, 2}, {&v_, 3}};
  for (const auto& in : inputs) {
    CUdeviceptr ptr = in.buffer->get();
    long long count = (long long)(in.buffer->bytes() / 2);
    unsigned long long s = seed * 4 + in.salt;
    void* args[] = {&ptr, &count, &s, &scale};
    launch(gen::kAttentionFillRandom, blocks_for(count, 256, 65535), args);
  }
  AttentionParams prm = params();
  int head_dim = int(p.head_dim), causal = p.causal ? 1 : 0, num = int(n);
  CUdeviceptr rows_ptr = rows_device_.get(), ref_ptr = reference_device_.get(),
              ref_lse_ptr = reference_lse_device_.get();
  void* ref_args[] = {&prm, &head_dim, &causal, &rows_ptr, &num, &ref_ptr, &ref_lse_ptr};
  launch(gen::kAttentionReferenceRows, std::uint32_t(std::min<std::size_t>(n, 65535)), ref_args,
         128);
  rt::check(d.stream_synchronize(stream_), "cuStreamSynchronize(reference)");
  reference_ = rt::copy_to_host<float>(ref_ptr, values, "cuMemcpyDtoH(reference)");
  reference_lse_ = rt::copy_to_host<float>(ref_lse_ptr, n, "cuMemcpyDtoH(reference lse)");
}

void AttentionWorkload::set_packed(AttentionLayout layout) {
  const AttentionProblem& p = problem_;
  const std::int64_t d = p.head_dim;
  auto packed = [&](std::int64_t(&strides)[3], std::int64_t heads, std::int64_t rows) {
    strides[0] = 0;
    strides[1] = layout == AttentionLayout::kBNHD ? heads * d : d;
    strides[2] = layout == AttentionLayout::kBNHD ? d : rows * d;
  };
  packed(tensors_.q_strides, p.heads_q, rows_q_);
  packed(tensors_.o_strides, p.heads_q, rows_q_);
  packed(tensors_.k_strides, p.heads_kv, rows_k_);
  packed(tensors_.v_strides, p.heads_kv, rows_k_);
  for (bool keys : {false, true}) {
    std::vector<int> offsets{0};
    for (std::int64_t length : varlen_lengths(p, keys))
      offsets.push_back(offsets.back() + int(length));
    (keys ? cu_seqlens_k_host_ : cu_seqlens_q_host_) = offsets;
    rt::DeviceBuffer& buffer = keys ? cu_seqlens_k_ : cu_seqlens_q_;
    buffer = rt::DeviceBuffer(offsets.size() * sizeof(int));
    rt::check(rt::driver().memcpy_htod(buffer.get(), offsets.data(), offsets.size() * sizeof(int)),
              "cuMemcpyHtoD(cu_seqlens)");
  }
  tensors_.cu_seqlens_q = static_cast<const std::int32_t*>(cu_seqlens_q_.data());
  tensors_.cu_seqlens_k = static_cast<const std::int32_t*>(cu_seqlens_k_.data());
  tensors_.total_q = rows_q_;
  tensors_.total_k = rows_k_;
}

std::int64_t AttentionWorkload::seqlen_q_of(std::int64_t batch) const {
  if (!problem_.varlen) return problem_.seqlen_q;
  return cu_seqlens_q_host_[std::size_t(batch) + 1] - cu_seqlens_q_host_[std::size_t(batch)];
}

std::size_t AttentionWorkload::lse_index(int row) const {
  const AttentionProblem& p = problem_;
  if (!p.varlen) return std::size_t(row);
  const std::int64_t i = row % p.seqlen_q, bh = row / p.seqlen_q;
  return std::size_t((bh % p.heads_q) * p.total_q +
                     cu_seqlens_q_host_[std::size_t(bh / p.heads_q)] + i);
}

AttentionParams AttentionWorkload::params() const {
  return rt::make_attention_params(problem_, tensors_);
}

AttentionTensors AttentionWorkload::tensors(bool with_lse) const {
  AttentionTensors t = tensors_;
  if (!with_lse) t.lse = nullptr;
  return t;
}

void AttentionWorkload::launch(int kernel, std::uint32_t blocks, void** args,
                               std::uint32_t threads) {
  rt::launch_linear(module_->functions[kernel], blocks, threads, args, stream_,
                    "attention check kernel");
}

void AttentionWorkload::poison_output() {
  CUdeviceptr o = o_.get();
  long long count = (long long)(o_.bytes() / 2);
  void* args[] = {&o, &count};
  launch(gen::kAttentionFillPoison, blocks_for(count, 256, 65535), args);
  rt::check(rt::driver().memset_d8_async(lse_.get(), 0xff, lse_.bytes(), stream_),
            "cuMemsetD8Async(lse)");
}

OutputCheck AttentionWorkload::check_output(bool check_lse) {
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.memset_d8_async(count_device_.get(), 0, sizeof(unsigned long long), stream_),
            "cuMemsetD8Async");
  AttentionParams prm = params();
  int head_dim = int(problem_.head_dim), num = int(rows_.size());
  CUdeviceptr rows_ptr = rows_device_.get(), gathered = gathered_device_.get(),
              count = count_device_.get();
  void* args[] = {&prm, &head_dim, &rows_ptr, &num, &gathered, &count};
  launch(gen::kAttentionGatherRows, 132 * 8, args);
  const GatheredSamples<float> got =
      read_gathered<float>(stream_, gathered, reference_.size(), count);

  OutputCheck check;
  check.nonfinite = got.nonfinite;
  check.tolerance = attention_tolerance(problem_.dtype);
  check.relative_error = relative_error(got.values, reference_);
  if (got.nonfinite > 0) {
    check.detail =
        fmt::format("{} values of O are NaN/Inf (unwritten or overflowed)", got.nonfinite);
    return check;
  }
  if (!(check.relative_error <= check.tolerance)) {
    check.detail = fmt::format("O relative error {:.3g} > tolerance {:.3g}", check.relative_error,
                               check.tolerance);
    return check;
  }
  if (check_lse) {
    std::vector<float> lse(lse_.bytes() / 4);
    rt::check(d.memcpy_dtoh(lse.data(), lse_.get(), lse_.bytes()), "cuMemcpyDtoH(lse)");
    for (std::size_t x = 0; x < rows_.size(); ++x) {
      const float want = reference_lse_[x], have = lse[lse_index(rows_[x])];
      const bool both_empty = std::isinf(want) && want < 0 && std::isinf(have) && have < 0;
      if (!both_empty && !(std::fabs(double(have) - want) <=
                           kLseTolerance * std::max(1.0, std::fabs(double(want))))) {
        check.detail = fmt::format("lse of row {} is {}, expected {}", rows_[x], have, want);
        return check;
      }
    }
  }
  check.passed = true;
  return check;
}

}  // namespace kt::tune
