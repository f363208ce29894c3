// RFC 4180 CSV, the format of `kerntune cache export`: fields separated by commas, records by
// newlines; a field containing a comma, a quote, CR or LF is quoted, with its quotes doubled.
// Knows nothing of measurements or winners; database_files.cpp maps records to them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kt::cache::csv {

// `field` as it appears in a CSV file: unchanged, or quoted with inner quotes doubled when it
// contains ',', '"', '\r' or '\n'.
std::string quote_field(std::string_view field);

// Appends `fields` as one record, terminated by "\n", to `out`.
void append_record(std::string& out, const std::vector<std::string>& fields);

// One parsed record and the line of the file it starts on (1-based).
struct Record {
  std::int64_t line = 0;
  std::vector<std::string> fields;
};

// Parses a whole CSV text: accepts LF and CRLF line ends, a UTF-8 byte order mark, quoted
// fields spanning lines; skips empty lines. Throws kt::Error (kInvalidArgument) with the text
// "<source_name>:<line>: <problem>" for a stray quote inside an unquoted field, text after a
// closing quote, or a quoted field left open at the end of the file.
std::vector<Record> parse(std::string_view text, const std::string& source_name);

}  // namespace kt::cache::csv
