// Fuzzes the runtime's dispatch over a fuzzed database: winners with fuzzed problem keys,
// configs, devices, versions and times are written with plain SQL (as another program could),
// the file is opened read-only as the runtime opens a shipped database, and a problem of any op
// (or a fuzzed key) goes down the runtime's resolve chain: the op by its key, the problem
// validated, rt::ranked_choices through its grades (exact, same GPU model, same compute
// capability, nearest-shape, predicted, model default), the model's next configs, the kernel
// source of the choice. Only kt::Error escapes; every choice is a config valid for the problem on
// the device that fits the workspace, the model's come last but for neighbours' configs off its
// shortlist, and a choice of this problem's own winners (exact, same-model, same-cc, predicted)
// names it and the device it was tuned on.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "fuzz_support.hpp"
#include "generator/generated_source.hpp"
#include "runtime/op_dispatch.hpp"

namespace {

// Problems and configs a fuzzed field starts from, so that rows near the queried problem, and
// valid for it, are reached often.
constexpr const char* kProblems[] = {"gemm:bf16:bf16:nt:256x256x256",
                                     "gemm:bf16:bf16:nt:16x4096x4096",
                                     "gemm:bf16:bf16:nt:1024x512x2048",
                                     "gemm:fp16:fp32:nn:128x64x8192",
                                     "attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d128.causal",
                                     "attn:bf16:b4.hq8.hkv8.sq2048.sk2048.d128.causal",
                                     "attn:bf16:b2.hq16.hkv4.sq512.sk512.d64.full",
                                     "rmsnorm:bf16:r8192.h4096",
                                     "rmsnorm:bf16:r16.h4096",
                                     "rmsnorm:fp16:r1.h5120.res",
                                     "gemm:bf16:bf16:nt:zzz",
                                     "attn:bf16:b0.hq0.hkv0.sq0.sk0.d0.full",
                                     "rmsnorm:x"};
// The prefixes winners are looked up by (an op's neighbour_prefix), with fuzzed shapes after.
constexpr const char* kPrefixes[] = {
    "gemm:bf16:bf16:nt:", "gemm:fp16:fp32:nn:", "attn:bf16:", "rmsnorm:bf16:", "rmsnorm:fp16:"};
constexpr const char* kConfigs[] = {"sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
                                    "sm80.bm64.bn64.bk32.wm32.wn32.s3.g1.sk4",
                                    "sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1",
                                    "sm90.bm128.bn64.bk64.s4.c1.e0.cl1.g1.sk1.swab",
                                    "smallm.bm16.bn128.bk64.wn64.wk4.sk1",
                                    "fa2.bm128.bn64.w8.s2",
                                    "fa3.bm128.bn128.s2",
                                    "rms.t128.r1.v8.reg",
                                    "rms.t32.r4.v2.smem",
                                    "garbage"};
constexpr const char* kDevices[] = {"h200", "a100"};

template <std::size_t N>
std::string pick(FuzzedDataProvider& in, const char* const (&choices)[N]) {
  return choices[in.ConsumeIntegralInRange<std::size_t>(0, N - 1)];
}

// A problem key: a listed one, a listed prefix with a fuzzed shape, or fuzzed text.
std::string problem_key(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return pick(in, kPrefixes) + in.ConsumeRandomLengthString(40);
    case 1:
      return in.ConsumeRandomLengthString(64);
    default:
      return pick(in, kProblems);
  }
}

// One of `choices` that `keep` accepts (a kt::Error from it counts as no), else any of them.
template <std::size_t N, class Keep>
std::string pick_where(FuzzedDataProvider& in, const char* const (&choices)[N], Keep keep) {
  std::vector<std::string> kept;
  for (const char* choice : choices) {
    try {
      if (keep(choice)) kept.emplace_back(choice);
    } catch (const kt::Error&) {
    }
  }
  if (kept.empty()) return pick(in, choices);
  return kept[in.ConsumeIntegralInRange<std::size_t>(0, kept.size() - 1)];
}

std::string config_key(FuzzedDataProvider& in) {
  return in.ConsumeIntegralInRange(0, 3) == 0 ? in.ConsumeRandomLengthString(64)
                                              : pick(in, kConfigs);
}

// The bytes of an empty kerntune database, made once: each input starts from a copy, which spares
// the schema's creation (its transactions and syncs) per input.
const std::vector<std::uint8_t>& empty_database() {
  static const std::vector<std::uint8_t> bytes = [] {
    kt::fuzz::ScratchFile file("dispatch_empty.db");
    const std::string& path = file.write(nullptr, 0);
    { kt::cache::Database::open(path); }  // closing it checkpoints the WAL into the file
    std::ifstream in(path, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
  }();
  return bytes;
}

// Writes fuzzed winners into the kerntune database at `path` with plain SQL, bypassing every
// check of the Database API: mostly about `query` (itself, its neighbours, fuzzed shapes under
// its op's prefix), on `device`, of the current versions, so that dispatch reads them. One
// transaction, unsynced: only speed matters here.
void write_winners(const std::string& path, const std::string& query, const kt::DeviceDesc& device,
                   FuzzedDataProvider& in) {
  kt::cache::sql::Connection db =
      kt::cache::sql::Connection::open(path, kt::cache::sql::OpenMode::kReadWriteCreate);
  db.exec("PRAGMA synchronous = OFF");
  db.exec("BEGIN");
  const std::string query_prefix = query.substr(0, query.find(':') + 1);
  const kt::OpEntry* query_op = kt::OpRegistry::instance().find_by_key(query);
  // Each field is right three times in four.
  auto right = [&] { return in.ConsumeIntegralInRange(0, 3) != 0; };
  const int rows = in.ConsumeIntegralInRange(0, 12);
  for (int i = 0; i < rows && in.remaining_bytes() > 0; ++i) {
    std::string problem;
    switch (in.ConsumeIntegralInRange(0, 4)) {
      case 0:
        problem = query;
        break;
      case 1:
        problem = query_prefix + in.ConsumeRandomLengthString(40);
        break;
      case 2:  // a neighbour: a listed problem the op measures a distance to
        problem = pick_where(in, kProblems, [&](const std::string& p) {
          return query_op != nullptr && query_op->spec->distance(query, p).has_value();
        });
        break;
      default:
        problem = problem_key(in);
    }
    const kt::OpEntry* op = kt::OpRegistry::instance().find_by_key(problem);
    const int template_version =
        op != nullptr && right() ? op->spec->template_version() : in.ConsumeIntegralInRange(-1, 20);
    const int protocol_version =
        right() ? kt::kBenchmarkProtocolVersion : in.ConsumeIntegralInRange(-1, 9);
    const std::string fingerprint =
        right() ? device.fingerprint() : in.ConsumeRandomLengthString(32);
    const double median_us =
        right() ? in.ConsumeFloatingPointInRange(0.001, 1e6) : in.ConsumeFloatingPoint<double>();
    // Half the time a listed config valid for the query, which dispatch may then choose.
    const std::string config =
        in.ConsumeBool() ? pick_where(in, kConfigs,
                                      [&](const std::string& c) {
                                        return query_op != nullptr &&
                                               !query_op->spec->validate_config(query, c, device);
                                      })
                         : config_key(in);
    kt::cache::sql::Statement insert(
        db,
        "INSERT OR REPLACE INTO winners (problem_key, device_fingerprint, protocol_version, "
        "template_version, config_key, median_us, predicted, run_id, created_unix) VALUES (?, ?, "
        "?, ?, ?, ?, ?, 'r', 1)");
    insert
        .bind_all(problem, fingerprint, protocol_version, template_version, config, median_us,
                  in.ConsumeIntegralInRange(0, 1))
        .run();
  }
  db.exec("COMMIT");
}

// The resolve chain of Runtime::Impl::resolve up to the compile, with its invariants; `spills`:
// the model default's cubin spilled, so the model's next configs are asked for (as expensive as
// the default itself for GEMM, hence not every time).
void resolve(const kt::cache::Database& db, const std::string& problem,
             const kt::DeviceDesc& device, std::int64_t max_workspace, bool lse, bool spills) {
  const kt::OpEntry& entry = kt::OpRegistry::instance().by_key(problem);
  const kt::OpSpec& op = *entry.spec;
  op.summarize(problem);
  const std::vector<kt::rt::DispatchChoice> choices =
      kt::rt::ranked_choices(&db, op, problem, device, max_workspace, 1);
  // The model's configs close the list but for the neighbours' off-shortlist ones after them.
  std::size_t last_model = choices.size();
  for (std::size_t i = 0; i < choices.size(); ++i)
    if (choices[i].grade == kt::rt::DispatchGrade::kModelDefault) last_model = i;
  if (last_model == choices.size()) std::abort();
  for (std::size_t i = last_model + 1; i < choices.size(); ++i)
    if (choices[i].grade != kt::rt::DispatchGrade::kNearestShape ||
        choices[i].tuned_problem_key.empty())
      std::abort();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const kt::rt::DispatchChoice& c = choices[i];
    if (op.validate_config(problem, c.config_key, device)) std::abort();
    if (op.workspace_bytes(problem, c.config_key, device) > max_workspace) std::abort();
    const bool own =
        c.grade == kt::rt::DispatchGrade::kExact || c.grade == kt::rt::DispatchGrade::kSameModel ||
        c.grade == kt::rt::DispatchGrade::kSameCc || c.grade == kt::rt::DispatchGrade::kPredicted;
    if (own && (c.tuned_problem_key != problem || c.tuned_device.empty())) std::abort();
    if (c.grade == kt::rt::DispatchGrade::kExact && c.tuned_device != device.fingerprint())
      std::abort();
    if (c.grade == kt::rt::DispatchGrade::kModelDefault && !c.tuned_problem_key.empty())
      std::abort();
  }
  const kt::rt::DispatchChoice& choice = choices.front();
  const std::string variant = lse && op.name() == "attention" ? "lse" : "";
  (void)kt::gen::generate(op, problem, choice.config_key, variant, device.arch());
  if (choice.grade == kt::rt::DispatchGrade::kModelDefault && spills)
    for (const std::string& next :
         kt::rt::model_ranked_configs(op, problem, device, max_workspace, 4))
      if (op.validate_config(problem, next, device)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kt::fuzz::ScratchFile file("dispatch.db");
  FuzzedDataProvider in(data, size);
  const kt::DeviceDesc& device = kt::device_profile(pick(in, kDevices));
  const std::string problem = in.ConsumeBool() ? pick(in, kProblems) : problem_key(in);
  const std::vector<std::uint8_t>& empty = empty_database();
  const std::string& path = file.write(empty.data(), empty.size());
  try {
    write_winners(path, problem, device, in);
  } catch (const kt::Error&) {
    return 0;  // the fuzzed SQL values were refused by SQLite itself
  }
  const std::int64_t max_workspace = in.ConsumeBool()
                                         ? std::int64_t(64) << 20
                                         : in.ConsumeIntegralInRange<std::int64_t>(0, 1 << 30);
  const bool lse = in.ConsumeBool();
  const bool spills = in.ConsumeIntegralInRange(0, 3) == 0;
  try {
    const kt::cache::Database db = kt::cache::Database::open_readonly(path);
    resolve(db, problem, device, max_workspace, lse, spills);
  } catch (const kt::Error&) {
  }
  return 0;
}
