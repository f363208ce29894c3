// The wire protocol between the tuner and its worker processes: a frame is a 4-byte
// little-endian payload length and the payload; a payload is a sequence of named fields, each a
// 4-byte length and bytes (so values may be text or raw cubin bytes). Blocking I/O on a
// socket, with a deadline on reads. No SIGPIPE: writes to a dead peer report false.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kt::tune {

// An ordered list of (name, value) fields. Setting a name again replaces its value.
class Message {
 public:
  Message& set(const std::string& name, std::string value);
  Message& set(const std::string& name, const char* value) { return set(name, std::string(value)); }
  Message& set(const std::string& name, std::int64_t value);
  Message& set(const std::string& name, int value) { return set(name, std::int64_t{value}); }
  Message& set(const std::string& name, double value);  // shortest round-trip text
  Message& set(const std::string& name, bool value) { return set(name, std::int64_t{value}); }

  bool has(const std::string& name) const;
  std::optional<std::string> find(const std::string& name) const;
  // Throw kt::Error (kInternal) naming the field when it is absent or not a number.
  const std::string& get(const std::string& name) const;
  std::int64_t get_int(const std::string& name) const;
  double get_double(const std::string& name) const;

  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  bool operator==(const Message&) const = default;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Payload bytes and back; decode throws kt::Error (kInternal) on a malformed payload.
std::string encode(const Message& message);
Message decode(std::string_view payload);

// Writes one frame. False when the peer has closed its end (never raises SIGPIPE).
bool write_message(int fd, const Message& message);

enum class ReadResult { kMessage, kClosed, kTimedOut };
// Reads one frame into `out`, waiting at most timeout_s (< 0: forever). kClosed: the peer
// closed its end or died (also for a frame cut short). Throws kt::Error (kInternal) for a
// malformed frame.
ReadResult read_message(int fd, Message& out, double timeout_s);

}  // namespace kt::tune
