// Verifying and timing candidates inside the benchmark worker.
#include "tuner/candidate_bench.hpp"

#include <functional>

#include "core/error.hpp"
#include "runtime/cuda_driver.hpp"

namespace kt::tune {

cache::Status classify_cuda_failure(int code, bool context_broken) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      return cache::Status::kIllegalAddress;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return cache::Status::kTimeout;
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
      return cache::Status::kLaunchFailure;
    default:
      return context_broken ? cache::Status::kLaunchFailure : cache::Status::kLaunchError;
  }
}

CandidateBench::CandidateBench(const std::string& problem_key, const DeviceDesc& device,
                               cache::Database* db, std::uint64_t seed, std::size_t workspace_bytes,
                               const BenchmarkOptions& options)
    : target_(make_bench_target(problem_key, device, db, modules_, stream_.get(), seed,
                                workspace_bytes)),
      bench_(stream_.get(), device, modules_, db),
      options_(options) {}

TrialResult CandidateBench::measure(const std::string& config_key, const cache::CubinRecord& cubin,
                                    double stop_above_us) {
  TrialResult r;
  try {
    target_->load(config_key, cubin);
    target_->poison_output();
    rt::check(target_->launch(config_key, stream_.get(), 0), "cuLaunchKernel(candidate)");
    const OutputCheck check = target_->check_output();
    if (!check.passed) {
      r.status = cache::Status::kWrongResult;
      r.detail = check.detail;
      return r;
    }
    r.timing = bench_.measure(timed_launch(config_key), options_, stop_above_us);
  } catch (const CudaError& e) {
    // NOTE: errors such as an illegal address are sticky: every later call of this context
    // fails too, so only a new process can measure the next candidate.
    r.context_broken = rt::driver().ctx_synchronize() != CUDA_SUCCESS;
    r.status = classify_cuda_failure(e.code(), r.context_broken);
    r.detail = e.what();
  } catch (const Error& e) {
    r.context_broken = rt::driver().ctx_synchronize() != CUDA_SUCCESS;
    r.status = r.context_broken ? cache::Status::kLaunchFailure : cache::Status::kLaunchError;
    r.detail = e.what();
  }
  return r;
}

std::function<CUresult(CUstream)> CandidateBench::timed_launch(const std::string& config_key) {
  return rotating_launch(target_->num_operand_sets(), [this, config_key](CUstream s, int set) {
    return target_->launch(config_key, s, set);
  });
}

void CandidateBench::load(const std::string& config_key, const cache::CubinRecord& cubin) {
  target_->load(config_key, cubin);
}

void CandidateBench::remeasure(const std::vector<std::string>& config_keys,
                               std::vector<Timing>& timings, int rounds) {
  std::vector<std::function<CUresult(CUstream)>> launches;
  std::vector<Timing*> pointers;
  for (std::size_t i = 0; i < config_keys.size(); ++i) {
    launches.push_back(timed_launch(config_keys[i]));
    pointers.push_back(&timings[i]);
  }
  bench_.remeasure_interleaved(launches, pointers, rounds);
}

}  // namespace kt::tune
