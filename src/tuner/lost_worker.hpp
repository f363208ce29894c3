// A candidate whose request lost its worker (it died or ran past its deadline), as the compile
// and benchmark workers' outcomes record it.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "cache/database.hpp"
#include "core/log.hpp"
#include "tuner/worker_process.hpp"

namespace kt::tune {

// For a reply of kind kDied or kTimedOut: sets out.worker_died, out.status (kTimeout past the
// deadline, else `died`) and out.detail ("<worker> <death>", worker e.g. "compile worker"), and
// logs a warning naming `config_key`. Outcome: CompileOutcome or TrialOutcome.
template <typename Outcome>
void record_lost_worker(Outcome& out, const WorkerReply& reply, std::string_view worker,
                        cache::Status died, std::string_view config_key) {
  out.worker_died = true;
  out.status = reply.kind == WorkerReply::Kind::kTimedOut ? cache::Status::kTimeout : died;
  out.detail = fmt::format("{} {}", worker, reply.death);
  logger().warn("{} lost config={} status={} detail=\"{}\"", worker, config_key,
                cache::to_string(out.status), out.detail);
}

}  // namespace kt::tune
