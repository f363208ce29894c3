// One timing row per config (config_timings.hpp).
#include "tools/config_timings.hpp"

#include <map>
#include <string>

#include "tuner/run_ledger.hpp"

namespace kt::cli {

std::vector<cache::Measurement> config_timings(std::vector<cache::Measurement> rows,
                                               cache::Status status) {
  std::map<std::string, cache::Measurement> latest;
  for (cache::Measurement& m : rows) {
    if (m.status != status) continue;
    auto [kept, inserted] = latest.try_emplace(m.config_key, m);
    if (!inserted &&
        (m.detail == tune::kFinalistDetail || kept->second.detail != tune::kFinalistDetail))
      kept->second = std::move(m);
  }
  std::vector<cache::Measurement> out;
  for (auto& [config, m] : latest) out.push_back(std::move(m));
  return out;
}

}  // namespace kt::cli
