// What every fuzz target shares: logging silenced, a scratch file of this process to hand bytes
// to the file-reading APIs, and the one rule of a fuzzed call (a kt::Error is an expected
// outcome; anything else escapes and libFuzzer reports it as a crash).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/log.hpp"

namespace kt::fuzz {

inline void silence_logging() { logger().set_level(spdlog::level::off); }

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file of this process under the temp directory, rewritten for every input; the names
// `path` plus "-wal", "-shm" and "-journal" are removed before each write.
class ScratchFile {
 public:
  explicit ScratchFile(const char* name)
      : path_((std::filesystem::temp_directory_path() /
               ("kt_fuzz_" + std::to_string(::getpid()) + "_" + name))
                  .string()) {}
  ~ScratchFile() { remove(); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& write(const std::uint8_t* data, std::size_t size) {
    remove();
    if (FILE* file = std::fopen(path_.c_str(), "wb")) {
      if (size > 0) std::fwrite(data, 1, size, file);
      std::fclose(file);
    }
    return path_;
  }

 private:
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

}  // namespace kt::fuzz
