// The C ABI refuses bad calls with KT_ERROR_INVALID_ARGUMENT and a kt_last_error() that names
// the argument, before touching the runtime handle or the device: so every case runs without a
// GPU, with a NULL runtime, and a call whose arguments are all fine reports the NULL runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "kerntune/kerntune.h"

namespace {

// Fake device addresses: never dereferenced, because every case fails before any device work.
void* address(std::uintptr_t value) { return reinterpret_cast<void*>(value); }
constexpr std::uintptr_t kAligned = 0x7f0000100000;

struct GemmCall {
  int64_t m = 64, n = 64, k = 64;
  kt_dtype in = KT_DTYPE_BF16, out = KT_DTYPE_BF16;
  kt_layout layout = KT_LAYOUT_NT;
  const void* a = address(kAligned);
  const void* b = address(kAligned + 0x10000);
  void* c = address(kAligned + 0x20000);
};

struct GemmCase {
  const char* name;
  std::function<void(GemmCall&)> change;
  const char* needle;
};

void expect_invalid(kt_status status, const std::string& needle) {
  EXPECT_EQ(status, KT_ERROR_INVALID_ARGUMENT) << kt_last_error();
  EXPECT_NE(std::string(kt_last_error()).find(needle), std::string::npos)
      << "'" << needle << "' not in: " << kt_last_error();
}

TEST(CApiGemm, EveryBadArgumentIsNamedBeforeTheRuntimeHandle) {
  const GemmCase cases[] = {
      {"zero m", [](GemmCall& c) { c.m = 0; }, "M = 0"},
      {"negative n", [](GemmCall& c) { c.n = -7; }, "N = -7"},
      {"huge k", [](GemmCall& c) { c.k = int64_t{1} << 40; }, "exceeds 2^31-1"},
      {"int64 min", [](GemmCall& c) { c.m = std::numeric_limits<int64_t>::min(); }, "M = -"},
      {"element count overflow", [](GemmCall& c) { c.m = c.n = 2'000'000'000; },
       "more than 2^31-1"},
      {"fp32 input", [](GemmCall& c) { c.in = KT_DTYPE_FP32; }, "inputs must be bf16 or fp16"},
      {"unknown in dtype", [](GemmCall& c) { c.in = static_cast<kt_dtype>(7); },
       "kt_dtype value 7"},
      {"unknown out dtype", [](GemmCall& c) { c.out = static_cast<kt_dtype>(-1); },
       "kt_dtype value -1"},
      {"unknown layout", [](GemmCall& c) { c.layout = static_cast<kt_layout>(5); },
       "kt_layout value 5"},
      {"null a", [](GemmCall& c) { c.a = nullptr; }, "operand A is a null pointer"},
      {"null b", [](GemmCall& c) { c.b = nullptr; }, "operand B is a null pointer"},
      {"null c", [](GemmCall& c) { c.c = nullptr; }, "operand C is a null pointer"},
      {"a off 16 bytes on the vector path", [](GemmCall& c) { c.a = address(kAligned + 8); },
       "A at 0x7f0000100008 is not 16-byte aligned"},
      {"b off 16 bytes on the vector path", [](GemmCall& c) { c.b = address(kAligned + 0x10002); },
       "B at 0x7f0000110002 is not 16-byte aligned"},
      {"a off its elements on the scalar path",
       [](GemmCall& c) {
         c.k = 63;
         c.a = address(kAligned + 1);
       },
       "not aligned to its 2-byte elements"},
      {"nn b of even n % 8 != 0 off its 4-byte rows",
       [](GemmCall& c) {
         c.layout = KT_LAYOUT_NN;
         c.n = 334;
         c.b = address(kAligned + 0x10002);
       },
       "B at 0x7f0000110002 is not 4-byte aligned; its rows of N = 334 elements are"},
      {"nn b of n % 4 == 0 off its 8-byte rows",
       [](GemmCall& c) {
         c.layout = KT_LAYOUT_NN;
         c.n = 124;
         c.b = address(kAligned + 0x10004);
       },
       "B at 0x7f0000110004 is not 8-byte aligned"},
      {"fp32 c off its elements",
       [](GemmCall& c) {
         c.out = KT_DTYPE_FP32;
         c.c = address(kAligned + 0x20002);
       },
       "C at 0x7f0000120002 is not aligned to its 4-byte elements"},
  };
  for (const GemmCase& test : cases) {
    SCOPED_TRACE(test.name);
    GemmCall call;
    test.change(call);
    expect_invalid(kt_gemm(nullptr, call.m, call.n, call.k, call.in, call.out, call.layout, call.a,
                           call.b, call.c, nullptr),
                   test.needle);
  }
}

TEST(CApiGemm, ScalarPathAcceptsElementAlignedOperandsAndReachesTheHandleCheck) {
  GemmCall call;
  call.k = 63;  // K % 8 != 0: 2-byte loads, so 2-byte alignment is enough
  call.a = address(kAligned + 2);
  expect_invalid(kt_gemm(nullptr, call.m, call.n, call.k, call.in, call.out, call.layout, call.a,
                         call.b, call.c, nullptr),
                 "runtime is NULL");
  // nn with odd N: B's rows start on any element.
  call.layout = KT_LAYOUT_NN;
  call.n = 333;
  call.b = address(kAligned + 0x10002);
  expect_invalid(kt_gemm(nullptr, call.m, call.n, call.k, call.in, call.out, call.layout, call.a,
                         call.b, call.c, nullptr),
                 "runtime is NULL");
  // nn with N % 4 == 2: 4-byte rows.
  call.n = 334;
  call.b = address(kAligned + 0x10004);
  expect_invalid(kt_gemm(nullptr, call.m, call.n, call.k, call.in, call.out, call.layout, call.a,
                         call.b, call.c, nullptr),
                 "runtime is NULL");
}

kt_attention_args valid_attention_args() {
  kt_attention_args args{};
  args.batch = 2;
  args.heads_q = 8;
  args.heads_kv = 2;
  args.seqlen_q = args.seqlen_k = 128;
  args.head_dim = 128;
  args.dtype = KT_DTYPE_BF16;
  args.q = address(kAligned);
  args.k = address(kAligned + 0x100000);
  args.v = address(kAligned + 0x200000);
  args.o = address(kAligned + 0x300000);
  // (B, N, H, d)
  const int64_t q_strides[3] = {128 * 8 * 128, 8 * 128, 128};
  const int64_t kv_strides[3] = {128 * 2 * 128, 2 * 128, 128};
  for (int i = 0; i < 3; ++i) {
    args.q_strides[i] = args.o_strides[i] = q_strides[i];
    args.k_strides[i] = args.v_strides[i] = kv_strides[i];
  }
  return args;
}

struct AttentionCase {
  const char* name;
  std::function<void(kt_attention_args&)> change;
  const char* needle;
};

TEST(CApiAttention, EveryBadArgumentIsNamedBeforeTheRuntimeHandle) {
  const AttentionCase cases[] = {
      {"zero batch", [](kt_attention_args& a) { a.batch = 0; }, "batch (b) = 0"},
      {"negative seqlen_k", [](kt_attention_args& a) { a.seqlen_k = -1; }, "seqlen_k (sk) = -1"},
      {"huge seqlen_q", [](kt_attention_args& a) { a.seqlen_q = int64_t{1} << 33; },
       "exceeds 2^31-1"},
      {"heads not grouped", [](kt_attention_args& a) { a.heads_kv = 3; }, "not a multiple"},
      {"head_dim", [](kt_attention_args& a) { a.head_dim = 72; }, "head_dim = 72"},
      {"fp32", [](kt_attention_args& a) { a.dtype = KT_DTYPE_FP32; }, "bf16 or fp16"},
      {"unknown dtype", [](kt_attention_args& a) { a.dtype = static_cast<kt_dtype>(9); },
       "kt_dtype value 9"},
      {"null q", [](kt_attention_args& a) { a.q = nullptr; }, "tensor Q is a null pointer"},
      {"null o", [](kt_attention_args& a) { a.o = nullptr; }, "tensor O is a null pointer"},
      {"misaligned k", [](kt_attention_args& a) { a.k = address(kAligned + 0x100008); },
       "tensor K at 0x7f0000200008 is not 16-byte aligned"},
      {"negative stride", [](kt_attention_args& a) { a.v_strides[1] = -256; },
       "V has row stride -256"},
      {"stride not a multiple of 8", [](kt_attention_args& a) { a.o_strides[2] = 129; },
       "O has head stride 129"},
      {"colliding o heads", [](kt_attention_args& a) { a.o_strides[2] = 0; },
       "output O has head stride 0 over 8 heads"},
      {"colliding o batches", [](kt_attention_args& a) { a.o_strides[0] = 0; },
       "output O has batch stride 0 over 2 batches"},
      {"strides overflowing int64", [](kt_attention_args& a) { a.q_strides[1] = int64_t{1} << 60; },
       "spans more than 2^63 elements"},
      {"misaligned lse",
       [](kt_attention_args& a) { a.lse = static_cast<float*>(address(kAligned + 2)); },
       "lse buffer is not 4-byte aligned"},
      {"nan scale", [](kt_attention_args& a) { a.softmax_scale = std::nanf(""); },
       "softmax_scale = nan"},
      {"negative scale", [](kt_attention_args& a) { a.softmax_scale = -1; }, "softmax_scale = -1"},
      {"infinite scale", [](kt_attention_args& a) { a.softmax_scale = INFINITY; },
       "softmax_scale = inf"},
  };
  for (const AttentionCase& test : cases) {
    SCOPED_TRACE(test.name);
    kt_attention_args args = valid_attention_args();
    test.change(args);
    expect_invalid(kt_attention_forward(nullptr, &args, nullptr), test.needle);
  }
}

TEST(CApiAttention, NullArgsAndThenANullHandleAreNamed) {
  expect_invalid(kt_attention_forward(nullptr, nullptr, nullptr), "args is NULL");
  const kt_attention_args args = valid_attention_args();
  expect_invalid(kt_attention_forward(nullptr, &args, nullptr), "runtime is NULL");
}

kt_attention_backward_args valid_backward_args() {
  kt_attention_backward_args args{};
  args.batch = 2;
  args.heads_q = 8;
  args.heads_kv = 2;
  args.seqlen_q = args.seqlen_k = 128;
  args.head_dim = 128;
  args.dtype = KT_DTYPE_BF16;
  args.causal = 1;
  args.deterministic = 1;
  const void** inputs[] = {&args.q, &args.k, &args.v, &args.o, &args.dout};
  for (int i = 0; i < 5; ++i) *inputs[i] = address(kAligned + 0x100000 * std::uintptr_t(i));
  args.lse = static_cast<const float*>(address(kAligned + 0x500000));
  args.dq = address(kAligned + 0x600000);
  args.dk = address(kAligned + 0x700000);
  args.dv = address(kAligned + 0x800000);
  // (B, N, H, d)
  const int64_t q_strides[3] = {128 * 8 * 128, 8 * 128, 128};
  const int64_t kv_strides[3] = {128 * 2 * 128, 2 * 128, 128};
  for (int i = 0; i < 3; ++i) {
    args.q_strides[i] = args.o_strides[i] = args.dout_strides[i] = args.dq_strides[i] =
        q_strides[i];
    args.k_strides[i] = args.v_strides[i] = args.dk_strides[i] = args.dv_strides[i] = kv_strides[i];
  }
  return args;
}

struct BackwardCase {
  const char* name;
  std::function<void(kt_attention_backward_args&)> change;
  const char* needle;
};

TEST(CApiAttentionBackward, EveryBadArgumentIsNamedBeforeTheRuntimeHandle) {
  using Args = kt_attention_backward_args;
  const BackwardCase cases[] = {
      {"zero batch", [](Args& a) { a.batch = 0; }, "batch (b) = 0"},
      {"heads not grouped", [](Args& a) { a.heads_kv = 3; }, "not a multiple"},
      {"head_dim 32", [](Args& a) { a.head_dim = 32; }, "expected 64, 96, 128 or 256"},
      {"unknown dtype", [](Args& a) { a.dtype = static_cast<kt_dtype>(9); }, "kt_dtype value 9"},
      {"null dout", [](Args& a) { a.dout = nullptr; }, "tensor dO is a null pointer"},
      {"null dk", [](Args& a) { a.dk = nullptr; }, "tensor dK is a null pointer"},
      {"misaligned dq", [](Args& a) { a.dq = address(kAligned + 0x600008); },
       "tensor dQ at 0x7f0000700008 is not 16-byte aligned"},
      {"dv stride not a multiple of 8", [](Args& a) { a.dv_strides[1] = 260; },
       "dV has row stride 260"},
      {"colliding dq rows", [](Args& a) { a.dq_strides[1] = 0; },
       "output dQ has row stride 0 over 128 rows"},
      {"null lse", [](Args& a) { a.lse = nullptr; }, "lse is a null pointer"},
      {"misaligned lse", [](Args& a) { a.lse = static_cast<const float*>(address(kAligned + 2)); },
       "lse is not 4-byte aligned"},
      {"nan scale", [](Args& a) { a.softmax_scale = std::nanf(""); }, "softmax_scale = nan"},
  };
  for (const BackwardCase& test : cases) {
    SCOPED_TRACE(test.name);
    kt_attention_backward_args args = valid_backward_args();
    test.change(args);
    expect_invalid(kt_attention_backward(nullptr, &args, nullptr), test.needle);
  }
}

TEST(CApiAttentionBackward, NullArgsAndThenANullHandleAreNamed) {
  expect_invalid(kt_attention_backward(nullptr, nullptr, nullptr), "args is NULL");
  const kt_attention_backward_args args = valid_backward_args();
  expect_invalid(kt_attention_backward(nullptr, &args, nullptr), "runtime is NULL");
}

TEST(CApiRuntime, OpenWithoutAnOutPointerIsAnInvalidArgument) {
  expect_invalid(kt_runtime_open(nullptr, 0, nullptr), "out is NULL");
  expect_invalid(kt_runtime_open_device(nullptr, 0, 0, nullptr), "out is NULL");
}

TEST(CApiRuntime, ANegativeDeviceOrdinalIsNamedBeforeAnyDriverCall) {
  kt_runtime* runtime = reinterpret_cast<kt_runtime*>(0x1);
  expect_invalid(kt_runtime_open_device(nullptr, 1, -1, &runtime), "device ordinal -1");
  EXPECT_EQ(runtime, nullptr);
}

TEST(CApiRuntime, ClosingNullIsANoOpAndTheLastErrorIsNeverNull) {
  kt_runtime_close(nullptr);
  ASSERT_NE(kt_last_error(), nullptr);
  EXPECT_NE(kt_version(), nullptr);
}

}  // namespace
