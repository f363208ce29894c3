// Framing and field encoding of worker messages.
#include "tuner/worker_protocol.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.hpp"
#include "core/text.hpp"

namespace kt::tune {

namespace {

// A frame larger than this is a broken peer, not a message (cubins are a few MB at most).
constexpr std::uint32_t kMaxFrameBytes = 1u << 30;

void append_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

std::uint32_t read_u32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= std::uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorKind::kInternal, fmt::format("malformed worker message: {}", what));
}

// Reads exactly n bytes unless the peer closes or the deadline passes.
ReadResult read_exact(int fd, char* data, std::size_t n,
                      std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::size_t got = 0;
  while (got < n) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return ReadResult::kTimedOut;
      wait_ms = int(std::min<long long>(left.count() + 1, 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ReadResult::kClosed;
    if (ready == 0) continue;  // the deadline check above decides
    const ssize_t r = ::read(fd, data + got, n - got);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return ReadResult::kClosed;
    got += std::size_t(r);
  }
  return ReadResult::kMessage;
}

}  // namespace

Message& Message::set(const std::string& name, std::string value) {
  for (auto& field : fields_)
    if (field.first == name) {
      field.second = std::move(value);
      return *this;
    }
  fields_.emplace_back(name, std::move(value));
  return *this;
}

Message& Message::set(const std::string& name, std::int64_t value) {
  return set(name, std::to_string(value));
}

Message& Message::set(const std::string& name, double value) {
  return set(name, fmt::format("{}", value));
}

bool Message::has(const std::string& name) const { return find(name).has_value(); }

std::optional<std::string> Message::find(const std::string& name) const {
  for (const auto& field : fields_)
    if (field.first == name) return field.second;
  return std::nullopt;
}

const std::string& Message::get(const std::string& name) const {
  for (const auto& field : fields_)
    if (field.first == name) return field.second;
  malformed(fmt::format("no field '{}'", name));
}

std::int64_t Message::get_int(const std::string& name) const {
  try {
    return parse_int(get(name), name.c_str());
  } catch (const Error& e) {
    malformed(e.what());
  }
}

double Message::get_double(const std::string& name) const {
  const std::string& text = get(name);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    malformed(fmt::format("field '{}' holds '{}', not a number", name, text));
  return v;
}

std::string encode(const Message& message) {
  std::string out;
  for (const auto& [name, value] : message.fields()) {
    append_u32(out, std::uint32_t(name.size()));
    out += name;
    append_u32(out, std::uint32_t(value.size()));
    out += value;
  }
  return out;
}

Message decode(std::string_view payload) {
  Message m;
  std::size_t at = 0;
  auto take = [&]() {
    if (payload.size() - at < 4) malformed("a field length is cut short");
    const std::uint32_t n = read_u32(payload, at);
    at += 4;
    if (payload.size() - at < n) malformed("a field is cut short");
    std::string s(payload.substr(at, n));
    at += n;
    return s;
  };
  while (at < payload.size()) {
    std::string name = take();
    std::string value = take();
    m.set(name, std::move(value));
  }
  return m;
}

bool write_message(int fd, const Message& message) {
  const std::string payload = encode(message);
  std::string frame;
  frame.reserve(payload.size() + 4);
  append_u32(frame, std::uint32_t(payload.size()));
  frame += payload;
  std::size_t sent = 0;
  while (sent < frame.size()) {
    // NOTE: MSG_NOSIGNAL keeps a dead worker from killing the tuner with SIGPIPE without
    // touching the process's signal dispositions (the library never does).
    const ssize_t n = ::send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += std::size_t(n);
  }
  return true;
}

ReadResult read_message(int fd, Message& out, double timeout_s) {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout_s >= 0)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(timeout_s));
  char header[4];
  if (ReadResult r = read_exact(fd, header, 4, deadline); r != ReadResult::kMessage) return r;
  const std::uint32_t n = read_u32(std::string_view(header, 4), 0);
  if (n > kMaxFrameBytes) malformed(fmt::format("a frame of {} bytes", n));
  std::string payload(n, '\0');
  if (ReadResult r = read_exact(fd, payload.data(), n, deadline); r != ReadResult::kMessage)
    return r;
  out = decode(payload);
  return ReadResult::kMessage;
}

}  // namespace kt::tune
