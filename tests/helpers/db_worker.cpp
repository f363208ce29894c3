// A process for the database concurrency test (tests/cpu/cache_concurrency_test.cpp): a writer
// that stores its own measurements in small transactions, or a reader that repeatedly performs
// the runtime's GEMM dispatch lookup and sets winners until told to stop. Prints one line of
// figures, key=value, and exits 0; prints "error: ..." and exits 2 on any kt::Error (a locked
// database that outlasted every retry included); the reader exits 3 when a lookup missed a
// winner it had stored.
//   kt_test_db_worker writer DB ID ROWS ROWS_PER_TRANSACTION
//   kt_test_db_worker reader DB STOP_FILE
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/device_desc.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/op_registry.hpp"
#include "core/versions.hpp"
#include "runtime/op_dispatch.hpp"

namespace {

constexpr const char* kDevice = "NVIDIA H200/cc90/132sm";

kt::cache::Measurement measurement(int id, int row) {
  kt::cache::Measurement m;
  m.key = {"gemm:bf16:bf16:nt:256x256x256", kDevice, kt::kBenchmarkProtocolVersion,
           kt::kGemmTemplateVersion};
  m.config_key = "sm80.bm128.bn128.bk32.wm64.wn64.s4.g8.sk1";
  m.detail = fmt::format("w{}-{}", id, row);  // the row's identity, which the test counts
  m.median_us = 10 + row;
  m.num_reps = 10;
  m.run_id = fmt::format("writer-{}", id);
  m.created_unix = 1700000000;
  return m;
}

int write(const std::string& path, int id, int rows, int per_transaction) {
  kt::cache::Database db = kt::cache::Database::open(path);
  int transactions = 0;
  for (int first = 0; first < rows; first += per_transaction) {
    std::vector<kt::cache::Measurement> batch;
    for (int row = first; row < std::min(rows, first + per_transaction); ++row)
      batch.push_back(measurement(id, row));
    db.add_measurements(batch);
    ++transactions;
  }
  fmt::print("writer id={} rows={} transactions={} busy_retries={} errors=0\n", id, rows,
             transactions, kt::cache::sql::busy_retries());
  return 0;
}

// Dispatch lookups for the h200 profile; every 10th lookup first stores a winner for a
// new shape, and the lookup right after must find it as an exact hit.
int read(const std::string& path, const std::string& stop_file) {
  kt::cache::Database db = kt::cache::Database::open(path);
  const kt::DeviceDesc& device = kt::device_profile("h200");
  int lookups = 0, winners = 0, exact = 0;
  while (!std::filesystem::exists(stop_file) || lookups < 200) {
    kt::GemmProblem p;
    p.m = 64 * (1 + lookups / 10);
    p.n = p.k = 4096;
    if (lookups % 10 == 0) {
      kt::cache::Winner w;
      w.key = {kt::to_key(p), device.fingerprint(), kt::kBenchmarkProtocolVersion,
               kt::kGemmTemplateVersion};
      w.config_key =
          kt::rt::model_ranked_configs(kt::op_spec("gemm"), kt::to_key(p), device, 0, 1).front();
      w.median_us = 5;
      w.run_id = "reader";
      db.set_winner(w);
      ++winners;
    }
    const kt::rt::DispatchChoice choice =
        kt::rt::choose_config(&db, kt::op_spec("gemm"), kt::to_key(p), device, 0);
    if (choice.grade == kt::rt::DispatchGrade::kExact) ++exact;
    ++lookups;
  }
  // A lookup that missed a winner this process had stored is a lost write: exit 3.
  fmt::print("reader lookups={} winners={} exact={} missed={} busy_retries={} errors=0\n", lookups,
             winners, exact, lookups - exact, kt::cache::sql::busy_retries());
  return lookups == exact ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 5 && args[0] == "writer")
      return write(args[1], std::atoi(args[2].c_str()), std::atoi(args[3].c_str()),
                   std::atoi(args[4].c_str()));
    if (args.size() == 3 && args[0] == "reader") return read(args[1], args[2]);
  } catch (const kt::Error& error) {
    fmt::print("error: {}\n", error.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: kt_test_db_worker writer DB ID ROWS ROWS_PER_TRANSACTION\n"
               "       kt_test_db_worker reader DB STOP_FILE\n");
  return 1;
}
