// Fuzzes `cache import`: any bytes, as a CSV file, are either imported into a fresh in-memory
// database or refused with a kt::Error; an import that succeeded exports and re-imports adding
// nothing (idempotence).
#include <cstdlib>

#include "cache/database.hpp"
#include "core/error.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kt::fuzz::silence_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static kt::fuzz::ScratchFile input("import.csv");
  static kt::fuzz::ScratchFile exported("export.csv");
  const std::string& path = input.write(data, size);
  kt::cache::Database db = kt::cache::Database::open(":memory:");
  try {
    db.import_csv(path);
  } catch (const kt::Error&) {
    return 0;
  }
  const std::uint8_t nothing = 0;
  const std::string& out = exported.write(&nothing, 0);
  db.export_csv(out, kt::cache::Database::ExistingFile::kReplace);
  if (db.import_csv(out) != 0) std::abort();
  return 0;
}
