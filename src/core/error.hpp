// The one error hierarchy of kerntune. Expected outcomes (a rejected config, a candidate that
// fails to compile, a cache miss) are values, not exceptions; these are for what a caller
// must handle: bad input, a broken toolkit or driver, an unreadable database.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace kt {

enum class ErrorKind {
  kInvalidArgument,  // the caller's input is wrong (shape, dtype, pointer alignment, key)
  kUnsupported,      // valid input that this build or device cannot serve
  kCompile,          // NVRTC rejected a program
  kCuda,             // a driver call failed
  kDatabase,         // the SQLite file is unreadable, corrupt or of another schema
  kNotFound,         // a named thing (config, profile, library) does not exist
  kInternal,         // a broken invariant inside kerntune
};

const char* to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// A program NVRTC refused: carries everything needed to reproduce it.
class CompileError : public Error {
 public:
  CompileError(std::string source_name, std::string log, std::vector<std::string> options);
  const std::string& source_name() const { return source_name_; }
  const std::string& log() const { return log_; }
  const std::vector<std::string>& options() const { return options_; }

 private:
  std::string source_name_;
  std::string log_;
  std::vector<std::string> options_;
};

// A failed driver call, naming the call and the driver's own error name.
class CudaError : public Error {
 public:
  CudaError(std::string call, int code, std::string code_name);
  const std::string& call() const { return call_; }
  int code() const { return code_; }

 private:
  std::string call_;
  int code_;
};

[[noreturn]] void throw_invalid(const std::string& message);

}  // namespace kt
