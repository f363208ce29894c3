// Candidate compilation through the database and the compile workers.
#include "tuner/candidate_compiler.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/log.hpp"
#include "generator/nvrtc_compiler.hpp"
#include "tuner/lost_worker.hpp"
#include "tuner/worker_messages.hpp"

namespace kt::tune {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

CandidateCompiler::CandidateCompiler(cache::Database& db, CompileSettings settings)
    : db_(db), settings_(std::move(settings)) {}

std::unique_ptr<WorkerProcess> CandidateCompiler::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto worker = std::move(idle_.back());
      idle_.pop_back();
      return worker;
    }
  }
  return std::make_unique<WorkerProcess>("compile");
}

void CandidateCompiler::release(std::unique_ptr<WorkerProcess> worker) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(worker));
}

CompileOutcome CandidateCompiler::compile(const std::string& config_key,
                                          gen::GeneratedSource source) {
  const auto fault = settings_.faults.find(config_key);
  if (fault != settings_.faults.end()) apply_test_fault(fault->second, source);
  CompileOutcome out;
  out.compile_key = gen::compile_key(source);
  out.kernel = source.name_expressions.empty() ? source.name : source.name_expressions.front();
  if (!settings_.retry_blocklisted) {
    auto entry = db_.find_blocklisted(settings_.device_fingerprint, out.compile_key);
    if (entry && !cache::is_device_fault(*entry)) {
      logger().debug("ignoring host-side blocklist entry config={} reason={}", config_key,
                     cache::to_string(entry->reason));
      entry.reset();
    }
    if (entry) {
      out.status = cache::Status::kRejected;
      out.detail = fmt::format(
          "blocklisted: {} ({}); `kerntune tune --retry-blocklisted` tries "
          "it again",
          cache::to_string(entry->reason), first_line(entry->detail));
      return out;
    }
  }
  if (auto found = db_.find_cubin(out.compile_key)) {
    out.record = std::move(*found);
    out.from_cache = true;
    return out;
  }
  Message request;
  put_source(request, "source.", source);
  std::unique_ptr<WorkerProcess> worker = acquire();
  const WorkerReply reply = worker->request(request, settings_.timeout_s);
  release(std::move(worker));
  if (reply.kind != WorkerReply::Kind::kReply) {
    ++restarts_;
    record_lost_worker(out, reply, "compile worker", cache::Status::kCompileCrash, config_key);
    return out;
  }
  const std::string& status = reply.message.get("status");
  if (status == "unavailable") throw Error(ErrorKind::kNotFound, reply.message.get("detail"));
  if (status != "ok") {
    out.status = cache::Status::kCompileError;
    out.detail = reply.message.get("detail");
    return out;
  }
  out.record = get_record(reply.message, "cubin.");
  db_.put_cubin(*out.record);
  return out;
}

}  // namespace kt::tune
