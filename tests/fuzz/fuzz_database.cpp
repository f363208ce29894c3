// Fuzzes the database loader: any bytes, as a database file, are either opened (and then read
// whole: summary, winners, measurements) or refused with a kt::Error; never a crash.
#include "cache/database.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kt::fuzz::ScratchFile file("database.db");
  const std::string& path = file.write(data, size);
  try {
    const kt::cache::Database db = kt::cache::Database::open(path);
    (void)db.summary();
    (void)db.all_winners();
    (void)db.all_measurements();
    (void)db.find_cubin("0");
  } catch (const kt::Error&) {
  }
  return 0;
}
