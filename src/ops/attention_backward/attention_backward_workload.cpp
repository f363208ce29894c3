// Attention backward's workload: random inputs, an FP32 forward for O and the logsumexp, poison,
// sampled FP32 references of dQ, dK and dV.
#include "ops/attention_backward/attention_backward_workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/arith.hpp"
#include "generator/generated_source.hpp"
#include "ops/attention/attention_param_fields.hpp"
#include "ops/attention_backward/attention_backward_config.hpp"
#include "ops/attention_backward/attention_backward_kernel.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/host_copy.hpp"
#include "runtime/kernel_launch.hpp"
#include "tuner/gathered_samples.hpp"

namespace kt::tune {

namespace {

// Kernels of the check module, in name-expression order.
enum CheckKernel : int {
  kFillRandom = 0,
  kFillPoison,
  kReferenceForward,
  kReferenceDq,
  kReferenceDkv,
  kGatherRows,
};

constexpr std::int64_t kMaxSampledRows = 128;
constexpr double kAbsoluteFloor = 1e-4;  // RMS of a reference below which errors are absolute

std::uint32_t blocks_for(std::int64_t items, std::int64_t threads, std::int64_t cap) {
  return std::uint32_t(std::clamp<std::int64_t>(ceil_div(items, threads), 1, cap));
}

// Rows r = (b · heads + h) · seqlen + i to check: the first and last rows of random heads, rows
// on both sides of 32-, 64- and 128-row block edges, uniform ones; every row when there are
// few.
std::vector<int> sample_rows(std::int64_t heads_total, std::int64_t seqlen, std::mt19937_64& rng) {
  const std::int64_t total = heads_total * seqlen;
  std::vector<int> rows;
  if (total <= kMaxSampledRows) {
    for (std::int64_t r = 0; r < total; ++r) rows.push_back(int(r));
    return rows;
  }
  auto pick = [&rng](std::int64_t n) {
    return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng);
  };
  const std::int64_t edges[] = {32, 64, 128};
  for (std::int64_t x = 0; x < kMaxSampledRows; ++x) {
    std::int64_t i = pick(seqlen);
    if (x % 4 == 0) i = x % 8 == 0 ? 0 : seqlen - 1;
    if (x % 4 == 1) {
      const std::int64_t edge = edges[x / 4 % 3];
      i = std::min(seqlen - 1, pick(ceil_div(seqlen, edge)) * edge + (x % 8 == 1 ? 0 : edge - 1));
    }
    rows.push_back(int(pick(heads_total) * seqlen + i));
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// ||got - ref|| / max(||ref||, floor · sqrt(n)).
double floored_relative_error(const std::vector<float>& got, const std::vector<float>& ref) {
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double delta = double(got[i]) - double(ref[i]);
    diff2 += delta * delta;
    ref2 += double(ref[i]) * double(ref[i]);
  }
  const double floor2 = kAbsoluteFloor * kAbsoluteFloor * double(ref.size());
  return std::sqrt(diff2 / std::max(ref2, floor2));
}

// Where a gradient's samples go wrong, for a failing check: the element of the largest error (a
// non-finite one first) with its coordinates, and the sampled rows whose own floored relative
// error exceeds `tolerance` (how many, and the first few), which tells a ragged edge or a mask
// from an error everywhere. Sample x is row rows[x] = (b · heads + h) · seqlen + i.
std::string describe_errors(const std::vector<float>& got, const std::vector<float>& ref,
                            const std::vector<int>& rows, std::int64_t heads, std::int64_t seqlen,
                            std::int64_t head_dim, double tolerance) {
  const auto where = [&](std::size_t x) {
    const std::int64_t r = rows[x];
    return fmt::format("b={} h={} row={}", r / seqlen / heads, r / seqlen % heads, r % seqlen);
  };
  std::size_t worst = 0;
  double worst_error = -1;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    const double error =
        std::isfinite(got[k]) ? std::fabs(double(got[k]) - double(ref[k])) : INFINITY;
    if (error > worst_error) {
      worst_error = error;
      worst = k;
    }
  }
  std::string out = fmt::format("max |error| {:.3g} at {} d={} (got {:.5g}, expected {:.5g})",
                                worst_error, where(worst / std::size_t(head_dim)),
                                worst % std::size_t(head_dim), got[worst], ref[worst]);
  std::vector<std::size_t> bad;
  for (std::size_t x = 0; x < rows.size(); ++x) {
    const std::size_t first = x * std::size_t(head_dim);
    const std::vector<float> row_got(got.begin() + first, got.begin() + first + head_dim);
    const std::vector<float> row_ref(ref.begin() + first, ref.begin() + first + head_dim);
    if (!(floored_relative_error(row_got, row_ref) <= tolerance)) bad.push_back(x);
  }
  out += fmt::format("; {} of {} sampled rows off", bad.size(), rows.size());
  for (std::size_t i = 0; i < bad.size() && i < 4; ++i)
    out += fmt::format("{}{}", i == 0 ? ": " : ", ", where(bad[i]));
  if (bad.size() > 4) out += ", ...";
  return out;
}

}  // namespace

double attention_backward_tolerance(DType dtype) { return dtype == DType::kBF16 ? 1e-2 : 3e-3; }

AttentionBackwardWorkload::AttentionBackwardWorkload(const AttentionBackwardProblem& p,
                                                     const DeviceDesc& device, cache::Database* db,
                                                     rt::ModuleCache& modules, CUstream stream,
                                                     std::uint64_t seed, AttentionLayout layout,
                                                     float softmax_scale)
    : problem_(p), stream_(stream) {
  const std::size_t e = std::size_t(size_bytes(p.dtype));
  const std::size_t q_bytes = std::size_t(p.batch * p.seqlen_q * p.heads_q * p.head_dim) * e;
  const std::size_t kv_bytes = std::size_t(p.batch * p.seqlen_k * p.heads_kv * p.head_dim) * e;
  q_ = rt::DeviceBuffer(q_bytes);
  o_ = rt::DeviceBuffer(q_bytes);
  dout_ = rt::DeviceBuffer(q_bytes);
  dq_ = rt::DeviceBuffer(q_bytes);
  k_ = rt::DeviceBuffer(kv_bytes);
  v_ = rt::DeviceBuffer(kv_bytes);
  dk_ = rt::DeviceBuffer(kv_bytes);
  dv_ = rt::DeviceBuffer(kv_bytes);
  lse_ = rt::DeviceBuffer(std::size_t(p.batch * p.heads_q * p.seqlen_q) * 4);
  workspace_ = rt::DeviceBuffer(std::size_t(attention_backward_workspace(p).bytes));
  count_ = rt::DeviceBuffer(sizeof(unsigned long long));
  if (layout == AttentionLayout::kBNHD)
    tensors_.set_bnhd_strides(p);
  else
    tensors_.set_bhnd_strides(p);
  tensors_.q = q_.data();
  tensors_.k = k_.data();
  tensors_.v = v_.data();
  tensors_.o = o_.data();
  tensors_.dout = dout_.data();
  tensors_.lse = static_cast<const float*>(lse_.data());
  tensors_.dq = dq_.data();
  tensors_.dk = dk_.data();
  tensors_.dv = dv_.data();
  tensors_.softmax_scale = softmax_scale;

  const std::string_view type = device_type_name(p.dtype);
  const KernelSource checks{
      fmt::format("attention_bwd_check.{}", to_string(p.dtype)),
      {"kerntune/attention_backward/attention_bwd_check.cuh"},
      {fmt::format("kt::fill_random<{}>", type), fmt::format("kt::fill_poison<{}>", type),
       fmt::format("kt::attention_bwd_reference_forward<{}>", type),
       fmt::format("kt::attention_bwd_reference_dq<{}>", type),
       fmt::format("kt::attention_bwd_reference_dkv<{}>", type),
       fmt::format("kt::attention_bwd_gather_rows<{}>", type)}};
  module_ = &modules.load(
      rt::get_or_compile(db, gen::generate(checks, device.arch()), true, db != nullptr).record);

  float scale = 1.0f;
  const struct {
    const rt::DeviceBuffer* buffer;
    std::uint64_t salt;
  } inputs[] = {{&q_, 1}, {&k_, 2}, {&v_, 3}, {&dout_, 4}};
  for (const auto& in : inputs) {
    CUdeviceptr ptr = in.buffer->get();
    long long count = (long long)(in.buffer->bytes() / e);
    unsigned long long s = seed * 5 + in.salt;
    void* args[] = {&ptr, &count, &s, &scale};
    launch(kFillRandom, blocks_for(count, 256, 65535), args, 256);
  }
  // O and the logsumexp of every row: what the forward hands the backward.
  AttentionBwdParams params = rt::make_attention_backward_params(p, tensors_, workspace_.get());
  int head_dim = int(p.head_dim), causal = p.causal ? 1 : 0;
  CUdeviceptr o_ptr = o_.get(), lse_ptr = lse_.get();
  void* forward_args[] = {&params, &head_dim, &causal, &o_ptr, &lse_ptr};
  launch(kReferenceForward, blocks_for(p.batch * p.heads_q * p.seqlen_q, 1, 16384), forward_args);

  std::mt19937_64 rng(seed ^ 0x61747462776dULL);
  q_samples_.rows = sample_rows(p.batch * p.heads_q, p.seqlen_q, rng);
  kv_samples_.rows = sample_rows(p.batch * p.heads_kv, p.seqlen_k, rng);
  const rt::CudaDriver& d = rt::driver();
  for (Samples* s : {&q_samples_, &kv_samples_}) {
    s->rows_device = rt::DeviceBuffer(s->rows.size() * sizeof(int));
    rt::check(d.memcpy_htod(s->rows_device.get(), s->rows.data(), s->rows.size() * sizeof(int)),
              "cuMemcpyHtoD(sampled rows)");
  }
  const std::size_t q_values = q_samples_.rows.size() * std::size_t(p.head_dim);
  const std::size_t kv_values = kv_samples_.rows.size() * std::size_t(p.head_dim);
  gathered_ = rt::DeviceBuffer(std::max(q_values, kv_values) * sizeof(float));
  rt::DeviceBuffer ref_dq(q_values * sizeof(float)), ref_dk(kv_values * sizeof(float)),
      ref_dv(kv_values * sizeof(float));
  CUdeviceptr q_rows = q_samples_.rows_device.get(), kv_rows = kv_samples_.rows_device.get();
  CUdeviceptr dq_ptr = ref_dq.get(), dk_ptr = ref_dk.get(), dv_ptr = ref_dv.get();
  int num_q = int(q_samples_.rows.size()), num_kv = int(kv_samples_.rows.size());
  void* dq_args[] = {&params, &head_dim, &causal, &q_rows, &num_q, &dq_ptr};
  launch(kReferenceDq, std::uint32_t(num_q), dq_args);
  void* dkv_args[] = {&params, &head_dim, &causal, &kv_rows, &num_kv, &dk_ptr, &dv_ptr};
  launch(kReferenceDkv, std::uint32_t(num_kv), dkv_args);
  rt::check(d.stream_synchronize(stream_), "cuStreamSynchronize(attention backward reference)");
  reference_dq_ = rt::copy_to_host<float>(dq_ptr, q_values, "cuMemcpyDtoH(reference dQ)");
  reference_dk_ = rt::copy_to_host<float>(dk_ptr, kv_values, "cuMemcpyDtoH(reference dK)");
  reference_dv_ = rt::copy_to_host<float>(dv_ptr, kv_values, "cuMemcpyDtoH(reference dV)");
}

void AttentionBackwardWorkload::launch(int kernel, std::uint32_t blocks, void** args,
                                       std::uint32_t threads) {
  rt::launch_linear(module_->functions[kernel], blocks, threads, args, stream_,
                    "attention backward check kernel");
}

void AttentionBackwardWorkload::poison_output() {
  for (const rt::DeviceBuffer* out : {&dq_, &dk_, &dv_}) {
    CUdeviceptr ptr = out->get();
    long long count = (long long)(out->bytes() / std::size_t(size_bytes(problem_.dtype)));
    void* args[] = {&ptr, &count};
    launch(kFillPoison, blocks_for(count, 256, 65535), args, 256);
  }
  rt::check(rt::driver().memset_d8_async(workspace_.get(), 0xFF, workspace_.bytes(), stream_),
            "cuMemsetD8Async(attention backward workspace)");
}

AttentionBackwardWorkload::Gathered AttentionBackwardWorkload::gather(
    const rt::DeviceBuffer& tensor, const std::int64_t (&strides)[3], std::int64_t heads,
    std::int64_t seqlen, const Samples& samples) {
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.memset_d8_async(count_.get(), 0, sizeof(unsigned long long), stream_),
            "cuMemsetD8Async(count)");
  CUdeviceptr ptr = tensor.get(), rows = samples.rows_device.get(), out = gathered_.get(),
              count = count_.get();
  TensorStrides stride;
  rt::set_strides(strides, stride);
  int batch = int(problem_.batch), num_heads = int(heads), length = int(seqlen),
      head_dim = int(problem_.head_dim), num_rows = int(samples.rows.size());
  void* args[] = {&ptr,      &stride, &batch,    &num_heads, &length,
                  &head_dim, &rows,   &num_rows, &out,       &count};
  launch(kGatherRows, 132 * 8, args, 256);
  GatheredSamples<float> got =
      read_gathered<float>(stream_, out, samples.rows.size() * std::size_t(head_dim), count);
  return {std::move(got.values), got.nonfinite};
}

OutputCheck AttentionBackwardWorkload::check_output() {
  const AttentionBackwardProblem& p = problem_;
  OutputCheck check;
  check.tolerance = attention_backward_tolerance(p.dtype);
  const struct {
    const char* name;
    const rt::DeviceBuffer* tensor;
    const std::int64_t (&strides)[3];
    std::int64_t heads, seqlen;
    const Samples& samples;
    const std::vector<float>& reference;
  } outputs[] = {
      {"dQ", &dq_, tensors_.dq_strides, p.heads_q, p.seqlen_q, q_samples_, reference_dq_},
      {"dK", &dk_, tensors_.dk_strides, p.heads_kv, p.seqlen_k, kv_samples_, reference_dk_},
      {"dV", &dv_, tensors_.dv_strides, p.heads_kv, p.seqlen_k, kv_samples_, reference_dv_}};
  std::string failures;
  for (const auto& out : outputs) {
    const Gathered got = gather(*out.tensor, out.strides, out.heads, out.seqlen, out.samples);
    check.nonfinite += got.nonfinite;
    const double error = floored_relative_error(got.values, out.reference);
    check.relative_error = std::max(check.relative_error, std::isnan(error) ? INFINITY : error);
    const auto details = [&] {
      return describe_errors(got.values, out.reference, out.samples.rows, out.heads, out.seqlen,
                             p.head_dim, check.tolerance);
    };
    if (got.nonfinite > 0)
      failures += fmt::format("{}{} values of {} are NaN/Inf (unwritten or overflowed); {}",
                              failures.empty() ? "" : "; ", got.nonfinite, out.name, details());
    else if (!(error <= check.tolerance))
      failures +=
          fmt::format("{}{} relative error {:.3g} > tolerance {:.3g}; {}",
                      failures.empty() ? "" : "; ", out.name, error, check.tolerance, details());
  }
  check.passed = failures.empty();
  check.detail = failures;
  return check;
}

std::vector<std::uint8_t> AttentionBackwardWorkload::output_bytes() {
  const rt::CudaDriver& d = rt::driver();
  rt::check(d.stream_synchronize(stream_), "cuStreamSynchronize(attention backward outputs)");
  std::vector<std::uint8_t> bytes(dq_.bytes() + dk_.bytes() + dv_.bytes());
  std::size_t at = 0;
  for (const rt::DeviceBuffer* out : {&dq_, &dk_, &dv_}) {
    rt::check(d.memcpy_dtoh(bytes.data() + at, out->get(), out->bytes()),
              "cuMemcpyDtoH(attention backward output)");
    at += out->bytes();
  }
  return bytes;
}

}  // namespace kt::tune
