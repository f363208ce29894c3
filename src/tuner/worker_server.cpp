// The compile and benchmark workers' request loops.
#include "tuner/worker_server.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <optional>

#include "cache/database.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "runtime/context.hpp"
#include "runtime/cubin_provider.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_query.hpp"
#include "tuner/candidate_bench.hpp"
#include "tuner/test_faults.hpp"
#include "tuner/worker_messages.hpp"

namespace kt::tune {

namespace {

constexpr int kExitContextBroken = 3;
constexpr int kCompileLogLines = 20;

std::string first_lines(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text : text.substr(0, pos);
}

Message compile_one(const Message& request) {
  const gen::GeneratedSource source = get_source(request, "source.");
  if (test_fault_of(source) == TestFault::kCompileCrash) raise(SIGSEGV);
  Message reply;
  try {
    put_record(reply, "cubin.", rt::to_record(gen::compile(source)));
    reply.set("status", "ok");
  } catch (const CompileError& e) {
    reply.set("status", "compile_error").set("detail", first_lines(e.log(), kCompileLogLines));
  } catch (const Error& e) {
    reply.set("status", e.kind() == ErrorKind::kNotFound ? "unavailable" : "compile_error")
        .set("detail", e.what());
  }
  return reply;
}

// The benchmark worker's state: the bound device and the problem being tuned.
struct BenchState {
  std::optional<rt::BoundContext> context;
  DeviceDesc device;
  std::optional<cache::Database> db;
  std::optional<CandidateBench> bench;
};

Message setup(BenchState& s, const Message& request) {
  Message reply;
  try {
    if (!s.context) {
      s.context.emplace(int(request.get_int("device")));
      s.device = rt::query_device(s.context->device());
    }
    const std::string& db_path = request.get("db");
    s.bench.reset();
    s.db.reset();
    if (!db_path.empty() && db_path != ":memory:") s.db.emplace(cache::Database::open(db_path));
    s.bench.emplace(request.get("problem"), s.device, s.db ? &*s.db : nullptr,
                    std::uint64_t(request.get_int("seed")),
                    std::size_t(request.get_int("workspace_bytes")), get_bench_options(request));
    reply.set("status", "ok");
  } catch (const Error& e) {
    reply.set("status", "error").set("detail", e.what());
  }
  return reply;
}

Message measure(BenchState& s, const Message& request, bool& exiting) {
  const TrialResult r = s.bench->measure(request.get("config"), get_record(request, "cubin."),
                                         request.get_double("stop_above_us"));
  Message reply;
  reply.set("status", cache::to_string(r.status)).set("detail", r.detail);
  put_timing(reply, "timing.", r.timing);
  exiting = r.context_broken;
  reply.set("exiting", exiting);
  return reply;
}

Message remeasure(BenchState& s, const Message& request, bool& exiting) {
  const int count = int(request.get_int("count"));
  std::vector<std::string> keys;
  std::vector<Timing> timings;
  Message reply;
  try {
    for (int i = 0; i < count; ++i) {
      const std::string prefix = fmt::format("{}.", i);
      keys.push_back(request.get(prefix + "config"));
      timings.push_back(get_timing(request, prefix + "timing."));
      s.bench->load(keys.back(), get_record(request, prefix + "cubin."));
    }
    s.bench->remeasure(keys, timings, int(request.get_int("rounds")));
    for (int i = 0; i < count; ++i) put_timing(reply, fmt::format("{}.timing.", i), timings[i]);
    reply.set("status", "ok");
  } catch (const Error& e) {
    exiting = rt::driver().ctx_synchronize() != CUDA_SUCCESS;
    reply.set("status", "error").set("detail", e.what()).set("exiting", exiting);
  }
  return reply;
}

}  // namespace

int serve_compile(int fd) {
  Message request;
  while (read_message(fd, request, -1) == ReadResult::kMessage)
    if (!write_message(fd, compile_one(request))) return 1;
  return 0;
}

int serve_bench(int fd) {
  BenchState state;
  Message request;
  while (read_message(fd, request, -1) == ReadResult::kMessage) {
    const std::string& op = request.get("op");
    bool exiting = false;
    Message reply;
    if (op == "setup") {
      reply = setup(state, request);
    } else if (!state.bench) {
      reply.set("status", "error").set("detail", "no setup request before " + op);
    } else if (op == "measure") {
      reply = measure(state, request, exiting);
    } else if (op == "remeasure") {
      reply = remeasure(state, request, exiting);
    } else {
      reply.set("status", "error").set("detail", "unknown request " + op);
    }
    if (!write_message(fd, reply)) return 1;
    if (exiting) {
      logger().warn("benchmark worker exiting: its CUDA context is broken");
      // NOTE: no destructors: every driver call of a broken context fails.
      _exit(kExitContextBroken);
    }
  }
  return 0;
}

}  // namespace kt::tune
