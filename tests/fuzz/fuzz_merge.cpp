// Fuzzes `cache merge` with sources made of fuzzed rows: a kerntune database whose cubins,
// measurements and winners hold fuzzed keys, configs, statuses, times, names and bytes is merged
// into a fresh one. Only kt::Error escapes; every row merged passes its check (invalid_rows() of
// the target finds none); merging the same source again adds nothing.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/row_checks.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"
#include "core/sha256.hpp"
#include "fuzz_support.hpp"

namespace {

// Strings a fuzzed field starts from, so that valid rows are reached often.
constexpr const char* kProblems[] = {"gemm:bf16:bf16:nt:256x256x256", "gemm:fp16:fp32:nn:1x2x3",
                                     "attn:bf16:b1.hq8.hkv8.sq1024.sk1024.d128.causal",
                                     "gemm:bf16:bf16:nt:zzz", "attn:x"};
constexpr const char* kConfigs[] = {"sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1",
                                    "sm90.bm128.bn256.bk64.s4.c2.e2.cl2.g8.sk1",
                                    "fa2.bm128.bn64.w8.s2", "fa3.bm128.bn128.s2", "garbage"};
constexpr const char* kStatuses[] = {"ok", "predicted", "rejected", "timeout", "bogus"};

template <std::size_t N>
std::string pick(FuzzedDataProvider& in, const char* const (&choices)[N]) {
  if (in.ConsumeBool()) return in.ConsumeRandomLengthString(64);
  return choices[in.ConsumeIntegralInRange<std::size_t>(0, N - 1)];
}

double time_us(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return in.ConsumeFloatingPoint<double>();
    case 1:
      return -5;
    default:
      return in.ConsumeFloatingPointInRange(0.001, 1e6);
  }
}

// Writes fuzzed rows into the kerntune database at `path` with plain SQL, as another program
// could, bypassing every check of the Database API.
void write_rows(const std::string& path, FuzzedDataProvider& in) {
  { kt::cache::Database::open(path); }
  kt::cache::sql::Connection db =
      kt::cache::sql::Connection::open(path, kt::cache::sql::OpenMode::kReadWriteCreate);
  const int rows = in.ConsumeIntegralInRange(0, 8);
  for (int i = 0; i < rows && in.remaining_bytes() > 0; ++i) {
    switch (in.ConsumeIntegralInRange(0, 2)) {
      case 0: {
        kt::cache::sql::Statement insert(
            db,
            "INSERT OR IGNORE INTO cubins (compile_key, arch, source_name, name_expressions, "
            "lowered_names, cubin, registers, spill_bytes, smem_static_bytes, log, "
            "nvrtc_version, compile_ms, created_unix, cubin_sha256) VALUES (?, 'sm_90a', 's', "
            "?, ?, ?, 0, 0, 0, '', '13.0', 1, 1, ?)");
        const std::string key =
            in.ConsumeBool() ? kt::sha256_hex(std::to_string(i)) : in.ConsumeRandomLengthString(70);
        const std::string expression = in.ConsumeRandomLengthString(40);
        const std::string lowered = in.ConsumeRandomLengthString(40);
        const std::string bytes = in.ConsumeRandomLengthString(2048);
        const std::vector<char> blob(bytes.begin(), bytes.end());
        const std::string sha =
            in.ConsumeBool() ? kt::cache::cubin_sha256(blob) : in.ConsumeRandomLengthString(64);
        insert.bind_all(key, expression, lowered, blob, sha).run();
        break;
      }
      case 1: {
        kt::cache::sql::Statement insert(
            db,
            "INSERT OR IGNORE INTO measurements (problem_key, device_fingerprint, "
            "protocol_version, template_version, config_key, status, median_us, spread_pct, "
            "num_reps, tflops, sm_clock_mhz, predicted_us, detail, run_id, created_unix, "
            "row_sha256) VALUES (?, 'dev', ?, ?, ?, ?, ?, 0, ?, 0, 0, ?, '', 'r', 1, ?)");
        insert
            .bind_all(pick(in, kProblems), in.ConsumeIntegralInRange(-1, 9),
                      in.ConsumeIntegralInRange(-1, 20), pick(in, kConfigs), pick(in, kStatuses),
                      time_us(in), in.ConsumeIntegralInRange(-1, 100), time_us(in),
                      std::to_string(i))
            .run();
        break;
      }
      default: {
        kt::cache::sql::Statement insert(
            db,
            "INSERT OR IGNORE INTO winners (problem_key, device_fingerprint, "
            "protocol_version, template_version, config_key, median_us, predicted, run_id, "
            "created_unix) VALUES (?, 'dev', ?, ?, ?, ?, ?, 'r', 1)");
        insert
            .bind_all(pick(in, kProblems), in.ConsumeIntegralInRange(-1, 9),
                      in.ConsumeIntegralInRange(-1, 20), pick(in, kConfigs), time_us(in),
                      in.ConsumeIntegralInRange(0, 1))
            .run();
        break;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kt::fuzz::ScratchFile source("merge_source.db");
  static kt::fuzz::ScratchFile target_file("merge_target.db");
  FuzzedDataProvider in(data, size);
  const std::string& path = source.write(nullptr, 0);
  try {
    write_rows(path, in);
  } catch (const kt::Error&) {
    return 0;  // the fuzzed SQL values were refused by SQLite itself
  }
  kt::cache::Database target = kt::cache::Database::open(target_file.write(nullptr, 0));
  try {
    target.merge_from(path);
  } catch (const kt::Error&) {
    return 0;
  }
  const kt::cache::InvalidRows invalid = target.invalid_rows();
  if (invalid.num_cubins + invalid.num_measurements + invalid.num_winners != 0) std::abort();
  if (target.merge_from(path) != 0) std::abort();
  return 0;
}
