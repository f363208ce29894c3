// RFC 4180 CSV writer and a strict reader that names the line of every problem it finds.
#include "cache/csv.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace kt::cache::csv {

namespace {

std::string shown(char c) {
  if (c == '\t') return "a tab";
  if (static_cast<unsigned char>(c) < 0x20) return fmt::format("byte {:#04x}", c);
  return fmt::format("'{}'", c);
}

}  // namespace

std::string quote_field(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (const char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

void append_record(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += quote_field(fields[i]);
  }
  out += '\n';
}

std::vector<Record> parse(std::string_view text, const std::string& source_name) {
  const auto fail = [&](std::int64_t line, const std::string& problem) {
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}:{}: {}", source_name, line, problem));
  };
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) text.remove_prefix(3);

  std::vector<Record> records;
  std::size_t pos = 0;
  std::int64_t line = 1;
  const std::size_t size = text.size();
  // The length of the line end ("\n" or "\r\n") at `at`, 0 when there is none.
  const auto line_end = [&](std::size_t at) -> std::size_t {
    if (at < size && text[at] == '\n') return 1;
    if (at + 1 < size && text[at] == '\r' && text[at + 1] == '\n') return 2;
    return 0;
  };

  while (pos < size) {
    if (const std::size_t end_length = line_end(pos); end_length > 0) {  // an empty line
      pos += end_length;
      ++line;
      continue;
    }
    Record record;
    record.line = line;
    while (true) {  // one field per iteration
      std::string field;
      if (pos < size && text[pos] == '"') {
        const std::int64_t opened_on = line;
        ++pos;
        while (true) {
          if (pos >= size) {
            fail(opened_on,
                 "a quoted field opened on this line is not closed before the end of "
                 "the file");
          }
          const char c = text[pos];
          if (c == '"') {
            if (pos + 1 < size && text[pos + 1] == '"') {
              field += '"';
              pos += 2;
              continue;
            }
            ++pos;
            break;
          }
          if (c == '\n') ++line;
          field += c;
          ++pos;
        }
        if (pos < size && text[pos] != ',' && line_end(pos) == 0) {
          fail(line, fmt::format("{} after the closing quote of field {}: a quote inside a quoted "
                                 "field must be doubled",
                                 shown(text[pos]), record.fields.size() + 1));
        }
      } else {
        while (pos < size && text[pos] != ',' && line_end(pos) == 0) {
          if (text[pos] == '"') {
            fail(line, fmt::format("a quote inside unquoted field {}: quote the whole field and "
                                   "double the quotes inside it",
                                   record.fields.size() + 1));
          }
          field += text[pos];
          ++pos;
        }
      }
      record.fields.push_back(std::move(field));
      if (pos < size && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (const std::size_t end_length = line_end(pos); end_length > 0) {
        pos += end_length;
        ++line;
      }
      break;
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace kt::cache::csv
