// Record mode: the problems a runtime served without an exact tuned entry, appended to a fleet
// manifest (core/manifest.hpp) that `kerntune fleet run` then tunes. Threads and processes may
// record into one file at once: every append holds an exclusive flock on it, reads what is
// there, and writes the lines it lacks as whole lines in one write.
#pragma once

#include <mutex>
#include <string>
#include <unordered_set>

#include "core/device_desc.hpp"

namespace kt::rt {

class ProblemRecorder {
 public:
  explicit ProblemRecorder(std::string path);

  // Appends the manifest line of `problem_key` (manifest.hpp's problem_line), and before it the
  // device line of `device` when the file lacks it (a comment saying why, when no built-in
  // profile has its compute capability), unless the file holds the line already. A new or empty
  // file first gets the version line. Returns whether this call wrote the problem's line.
  // Throws kt::Error (invalid argument) naming the path and the failed call when the file cannot
  // be opened, locked, read or written, or the key is of no registered op.
  bool record(const std::string& problem_key, const DeviceDesc& device);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::mutex mutex_;
  std::unordered_set<std::string> recorded_;  // keys known to be in the file
};

}  // namespace kt::rt
