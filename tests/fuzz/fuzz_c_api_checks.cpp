// Fuzzes the C ABI's argument checks (kt_gemm, kt_attention_forward, kt_attention_backward) with
// a NULL runtime, which
// they check last: any sizes, dtypes, layouts, pointers, strides and scale give a status and a
// message, never a crash or an exception through the ABI; arguments that pass every check are
// refused for the NULL runtime.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "fuzz_support.hpp"
#include "kerntune/kerntune.h"

namespace {

// An address that is never dereferenced: the checks only look at its alignment.
const void* address(FuzzedDataProvider& in) {
  return reinterpret_cast<const void*>(in.ConsumeIntegral<std::uintptr_t>());
}

// An enum argument holding any int, as a C caller may pass it (a static_cast to an enum outside
// its enumerators' range would itself be undefined in C++).
template <typename Enum>
Enum any_value(FuzzedDataProvider& in) {
  const int raw = in.ConsumeIntegralInRange(-2, 4);
  Enum value;
  std::memcpy(&value, &raw, sizeof value);
  return value;
}

// Without a runtime no call succeeds, and every refusal says why.
void expect_refused(kt_status status) {
  if (status == KT_SUCCESS || std::string_view(kt_last_error()).empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int entry = in.ConsumeIntegralInRange(0, 2);
  if (entry == 0) {
    const auto m = in.ConsumeIntegral<std::int64_t>();
    const auto n = in.ConsumeIntegral<std::int64_t>();
    const auto k = in.ConsumeIntegral<std::int64_t>();
    const auto in_dtype = any_value<kt_dtype>(in);
    const auto out_dtype = any_value<kt_dtype>(in);
    const auto layout = any_value<kt_layout>(in);
    const void* a = address(in);
    const void* b = address(in);
    void* c = const_cast<void*>(address(in));
    expect_refused(kt_gemm(nullptr, m, n, k, in_dtype, out_dtype, layout, a, b, c, nullptr));
  } else if (entry == 1) {
    kt_attention_args args;
    std::memset(&args, 0, sizeof args);
    for (std::int64_t* size_field : {&args.batch, &args.heads_q, &args.heads_kv, &args.seqlen_q,
                                     &args.seqlen_k, &args.head_dim})
      *size_field = in.ConsumeIntegral<std::int64_t>();
    const int raw_dtype = in.ConsumeIntegralInRange(-2, 4);
    std::memcpy(&args.dtype, &raw_dtype, sizeof raw_dtype);
    args.causal = in.ConsumeIntegral<int>();
    args.q = address(in);
    args.k = address(in);
    args.v = address(in);
    args.o = const_cast<void*>(address(in));
    args.lse = in.ConsumeBool() ? nullptr : static_cast<float*>(const_cast<void*>(address(in)));
    for (std::int64_t* strides : {args.q_strides, args.k_strides, args.v_strides, args.o_strides})
      for (int i = 0; i < 3; ++i) strides[i] = in.ConsumeIntegral<std::int64_t>();
    args.softmax_scale = in.ConsumeFloatingPoint<float>();
    expect_refused(kt_attention_forward(nullptr, &args, nullptr));
  } else {
    kt_attention_backward_args args;
    std::memset(&args, 0, sizeof args);
    for (std::int64_t* size_field : {&args.batch, &args.heads_q, &args.heads_kv, &args.seqlen_q,
                                     &args.seqlen_k, &args.head_dim})
      *size_field = in.ConsumeIntegral<std::int64_t>();
    const int raw_dtype = in.ConsumeIntegralInRange(-2, 4);
    std::memcpy(&args.dtype, &raw_dtype, sizeof raw_dtype);
    args.causal = in.ConsumeIntegral<int>();
    args.deterministic = in.ConsumeIntegral<int>();
    for (const void** input : {&args.q, &args.k, &args.v, &args.o, &args.dout})
      *input = address(in);
    args.lse = in.ConsumeBool() ? nullptr : static_cast<const float*>(address(in));
    for (void** output : {&args.dq, &args.dk, &args.dv}) *output = const_cast<void*>(address(in));
    for (std::int64_t* strides :
         {args.q_strides, args.k_strides, args.v_strides, args.o_strides, args.dout_strides,
          args.dq_strides, args.dk_strides, args.dv_strides})
      for (int i = 0; i < 3; ++i) strides[i] = in.ConsumeIntegral<std::int64_t>();
    args.softmax_scale = in.ConsumeFloatingPoint<float>();
    expect_refused(kt_attention_backward(nullptr, &args, nullptr));
  }
  return 0;
}
