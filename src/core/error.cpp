// Error hierarchy: messages that name the problem and, where there is one, the fix.
#include "core/error.hpp"

#include <fmt/format.h>

namespace kt {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return "invalid argument";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kCompile:
      return "compile error";
    case ErrorKind::kCuda:
      return "CUDA error";
    case ErrorKind::kDatabase:
      return "database error";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kInternal:
      return "internal error";
  }
  return "error";
}

CompileError::CompileError(std::string source_name, std::string log,
                           std::vector<std::string> options)
    : Error(ErrorKind::kCompile, fmt::format("NVRTC failed to compile {}:\n{}", source_name, log)),
      source_name_(std::move(source_name)),
      log_(std::move(log)),
      options_(std::move(options)) {}

CudaError::CudaError(std::string call, int code, std::string code_name)
    : Error(ErrorKind::kCuda, fmt::format("{} failed: {} ({})", call, code_name, code)),
      call_(std::move(call)),
      code_(code) {}

void throw_invalid(const std::string& message) {
  throw Error(ErrorKind::kInvalidArgument, message);
}

}  // namespace kt
