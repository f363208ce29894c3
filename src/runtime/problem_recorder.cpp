// Record mode's appends (problem_recorder.hpp): flock, read, append the missing lines, unlock.
#include "runtime/problem_recorder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "core/manifest.hpp"

namespace kt::rt {

namespace {

[[noreturn]] void fail(const std::string& path, const char* call) {
  throw_invalid(fmt::format("record mode: {} of the manifest '{}' failed: {}", call, path,
                            std::strerror(errno)));
}

// An open file descriptor holding an exclusive flock, released and closed on scope exit.
class LockedFile {
 public:
  explicit LockedFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(path, "open");
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd_);
      errno = saved;
      fail(path, "flock");
    }
  }
  ~LockedFile() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  std::string read_all() const {
    std::string text;
    char buffer[65536];
    for (off_t offset = 0;;) {
      const ssize_t n = ::pread(fd_, buffer, sizeof buffer, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path_, "read");
      if (n == 0) return text;
      text.append(buffer, std::size_t(n));
      offset += n;
    }
  }

  // One write of `text` at the end (O_APPEND); a short write is continued.
  void append(std::string_view text) const {
    while (!text.empty()) {
      const ssize_t n = ::write(fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(path_, "write");
      text.remove_prefix(std::size_t(n));
    }
  }

 private:
  const std::string& path_;
  int fd_ = -1;
};

// The file's lines without comments and surrounding blanks (what a line says, for comparison).
std::set<std::string> meaningful_lines(std::string_view text) {
  std::set<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.empty()) lines.emplace(line);
  }
  return lines;
}

}  // namespace

ProblemRecorder::ProblemRecorder(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw_invalid("record mode: the manifest path is empty");
}

bool ProblemRecorder::record(const std::string& problem_key, const DeviceDesc& device) {
  const std::lock_guard lock(mutex_);
  if (recorded_.count(problem_key) != 0) return false;
  const std::string problem = problem_line(problem_key);
  const std::optional<std::string> device_text = device_line(device);
  const LockedFile file(path_);
  const std::string text = file.read_all();
  const std::set<std::string> present = meaningful_lines(text);
  std::string lines;
  if (!text.empty() && text.back() != '\n') lines += '\n';  // an edited file's last line
  if (present.empty())
    lines += fmt::format(
        "{} {}\n# recorded by kerntune: problems served without an exact tuned entry; tune them "
        "with `kerntune fleet run --manifest {} --shard 1/1`\n",
        kManifestMagic, kManifestVersion, path_);
  if (device_text && present.count(*device_text) == 0) {
    lines += *device_text + "\n";
  } else if (!device_text) {
    const std::string note = fmt::format(
        "# device {}: no built-in profile has its compute capability; name one in a device line",
        device.fingerprint());
    if (text.find(note) == std::string::npos) lines += note + "\n";
  }
  const bool added = present.count(problem) == 0;
  if (added) lines += problem + "\n";
  if (!lines.empty() && lines != "\n") file.append(lines);
  recorded_.insert(problem_key);
  return added;
}

}  // namespace kt::rt
