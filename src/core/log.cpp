// The one named logger of kerntune.
#include "core/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace kt {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    if (auto existing = spdlog::get("kerntune")) return existing;
    auto created = spdlog::stderr_color_mt("kerntune");
    created->set_level(spdlog::level::warn);
    created->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    return created;
  }();
  return *instance;
}

}  // namespace kt
