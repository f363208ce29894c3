// The worker protocol without any worker: messages and frames round-trip (binary values
// included), a read waits no longer than its deadline and tells a closed peer apart, the payload
// codecs are exact inverses, and test-fault specs parse strictly.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "tuner/test_faults.hpp"
#include "tuner/worker_messages.hpp"
#include "tuner/worker_protocol.hpp"

namespace kt::tune {
namespace {

class SocketPair : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }
  int fds_[2] = {-1, -1};
};

TEST(WorkerMessage, EncodesAndDecodesEveryFieldExactly) {
  Message m;
  const std::string binary("\0\x01\xff\x1f\n", 5);
  m.set("text", "hello").set("binary", binary).set("int", std::int64_t{-42}).set("real", 0.1);
  m.set("empty", "");
  m.set("text", "replaced");
  const Message back = decode(encode(m));
  EXPECT_EQ(back, m);
  EXPECT_EQ(back.get("text"), "replaced");
  EXPECT_EQ(back.get("binary"), binary);
  EXPECT_EQ(back.get_int("int"), -42);
  EXPECT_EQ(back.get_double("real"), 0.1);
  EXPECT_FALSE(back.has("missing"));
  EXPECT_THROW(back.get("missing"), Error);
  EXPECT_THROW(back.get_int("text"), Error);
}

TEST(WorkerMessage, TruncatedPayloadIsAnError) {
  Message m;
  m.set("name", "value");
  const std::string bytes = encode(m);
  EXPECT_THROW(decode(bytes.substr(0, bytes.size() - 1)), Error);
}

TEST_F(SocketPair, FrameRoundTripsOverASocket) {
  Message m;
  m.set("cubin", std::string(3 << 20, '\x7f'));  // larger than a socket buffer
  std::thread writer([&] { EXPECT_TRUE(write_message(fds_[0], m)); });
  Message got;
  EXPECT_EQ(read_message(fds_[1], got, 10), ReadResult::kMessage);
  writer.join();
  EXPECT_EQ(got, m);
}

TEST_F(SocketPair, ReadTimesOutAtItsDeadline) {
  Message got;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(read_message(fds_[1], got, 0.2), ReadResult::kTimedOut);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.19);
  EXPECT_LT(waited, 2.0);
}

TEST_F(SocketPair, ClosedPeerIsReportedAndWritingToItNeverRaisesSigpipe) {
  close(fds_[0]);
  fds_[0] = -1;
  Message got;
  EXPECT_EQ(read_message(fds_[1], got, 1), ReadResult::kClosed);
  Message m;
  m.set("a", "b");
  EXPECT_FALSE(write_message(fds_[1], m));  // the test process survives: no SIGPIPE
}

TEST(WorkerMessages, RecordSourceTimingAndOptionsRoundTrip) {
  cache::CubinRecord r;
  r.compile_key = "abc";
  r.arch = "sm_90a";
  r.source_name = "sm80.bm128";
  r.name_expressions = {"kt::gemm<1, 2>", "kt::reduce<3>"};
  r.lowered_names = {"_Z1a", "_Z1b"};
  r.cubin = {'\0', '\x01', '\xff'};
  r.registers = 168;
  r.spill_bytes = 4;
  r.smem_static_bytes = 16;
  r.log = "ptxas info\nline 2";
  r.nvrtc_version = "13.0";
  r.compile_ms = 812.25;
  gen::GeneratedSource s{
      "name", "code\n", {"kt::a<1>", "kt::b<2>"}, "sm_80", {"-O3", "--std=c++17"}};
  Timing t;
  t.median_us = 12.5;
  t.p10_us = 12;
  t.p90_us = 13.25;
  t.num_reps = 77;
  t.stopped_early = true;
  BenchmarkOptions o{3, 4.5, 2, 11, 99, 150.5};
  Message m;
  put_record(m, "r.", r);
  put_source(m, "s.", s);
  put_timing(m, "t.", t);
  put_bench_options(m, o);
  const Message back = decode(encode(m));
  const cache::CubinRecord r2 = get_record(back, "r.");
  EXPECT_EQ(r2.compile_key, r.compile_key);
  EXPECT_EQ(r2.name_expressions, r.name_expressions);
  EXPECT_EQ(r2.lowered_names, r.lowered_names);
  EXPECT_EQ(r2.cubin, r.cubin);
  EXPECT_EQ(r2.registers, r.registers);
  EXPECT_EQ(r2.log, r.log);
  EXPECT_EQ(r2.compile_ms, r.compile_ms);
  const gen::GeneratedSource s2 = get_source(back, "s.");
  EXPECT_EQ(s2.code, s.code);
  EXPECT_EQ(s2.name_expressions, s.name_expressions);
  EXPECT_EQ(s2.options, s.options);
  const Timing t2 = get_timing(back, "t.");
  EXPECT_EQ(t2.median_us, t.median_us);
  EXPECT_EQ(t2.p90_us, t.p90_us);
  EXPECT_EQ(t2.num_reps, t.num_reps);
  EXPECT_TRUE(t2.stopped_early);
  const BenchmarkOptions o2 = get_bench_options(back);
  EXPECT_EQ(o2.warmup_ms, 4.5);
  EXPECT_EQ(o2.probe_reps, 2);
  EXPECT_EQ(o2.max_reps, 99);
  EXPECT_EQ(o2.target_ms, 150.5);
}

TEST(TestFaults, ParseAndMarkTheSourceSoThatTheCompileKeyChanges) {
  const TestFaults f = parse_test_faults("sm80.bm64.bn64:oob,fa2.bm128.bn64.w8.s2:compile_crash");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.at("sm80.bm64.bn64"), TestFault::kOutOfBounds);
  EXPECT_EQ(f.at("fa2.bm128.bn64.w8.s2"), TestFault::kCompileCrash);
  EXPECT_THROW(parse_test_faults("cfg:melt"), Error);
  EXPECT_THROW(parse_test_faults("cfg"), Error);
  gen::GeneratedSource s;
  s.code = "body\n";
  EXPECT_EQ(test_fault_of(s), TestFault::kNone);
  apply_test_fault(TestFault::kHang, s);
  EXPECT_EQ(s.code, "#define KT_TEST_FAULT 3\nbody\n");
  EXPECT_EQ(test_fault_of(s), TestFault::kHang);
}

}  // namespace
}  // namespace kt::tune
