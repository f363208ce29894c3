// A thin RAII layer over the SQLite C API: a connection, prepared statements, transactions that
// roll back unless committed, and a step that retries while another process holds the lock.
// Private to src/cache/; sqlite3.h itself is included only by sql.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace kt::cache::sql {

// A failed SQLite call: a kt::Error (kDatabase) that also carries SQLite's (extended) result
// code, so that callers can tell "not a database" and "corrupt" from other failures.
class SqliteError : public Error {
 public:
  SqliteError(int code, const std::string& message)
      : Error(ErrorKind::kDatabase, message), code_(code) {}
  int code() const { return code_; }
  // The primary result code (SQLITE_CORRUPT for SQLITE_CORRUPT_VTAB, ...).
  int primary_code() const { return code_ & 0xff; }
  bool is_not_a_database() const;  // SQLITE_NOTADB or SQLITE_CORRUPT
  bool is_cant_open() const;       // SQLITE_CANTOPEN

 private:
  int code_;
};

enum class OpenMode { kReadWriteCreate, kReadOnly };

// How many times a step of this process found the database locked by another connection (past
// SQLite's own busy timeout) and was retried; for the concurrency tests and diagnostics.
std::int64_t busy_retries();

// The URI SQLite is given for `path` (":memory:" stays as it is): file:// + the absolute path,
// percent-encoded, with ?mode=ro when `read_only`, and &immutable=1 as well when `immutable`.
std::string uri_for_path(const std::string& path, bool read_only, bool immutable = false);

// Whether this process may create files in the directory of `path`.
bool directory_is_writable(const std::string& path);

// One sqlite3 connection. Move-only; closes on destruction. Not synchronized: the owner
// serializes access (Database holds a mutex around every use).
class Connection {
 public:
  // Opens `path` (a filesystem path or ":memory:"). Creates nothing but the file itself. Every
  // connection refuses triggers, views, extensions and untrusted schema functions, and runs in
  // defensive mode. A read-only open of a file in a directory this process cannot write is
  // immutable (no -wal, -shm or locks: see Connection::open). Throws SqliteError naming the path
  // when SQLite cannot open it.
  static Connection open(const std::string& path, OpenMode mode);

  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more ';'-separated statements that return no rows we need.
  void exec(std::string_view sql);
  // Rows inserted, updated or deleted by the most recent INSERT/UPDATE/DELETE.
  std::int64_t changes() const;

  // Throws SqliteError for `code`, naming the path, `what` and SQLite's own message.
  [[noreturn]] void fail(int code, std::string_view what) const;

  // The first `bytes` bytes of the main database file (fewer when it is shorter) and its size in
  // bytes, read through SQLite's own handle of it. NOTE: opening the file anew and closing it
  // would drop every POSIX lock this process holds on it, SQLite's included. Empty and -1 for an
  // in-memory database.
  std::pair<std::string, std::int64_t> main_file_head(std::size_t bytes) const;

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void close() noexcept;

  sqlite3* db_ = nullptr;
  std::string path_;
};

// One prepared statement. Parameters are 1-based, columns 0-based (SQLite's convention).
// Text and blobs are copied on bind. NaN is stored as NULL by SQLite, and a NULL REAL column
// reads back as NaN.
class Statement {
 public:
  Statement(Connection& db, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);          // never NULL: "" binds an empty text
  Statement& bind(int index, const std::vector<char>& blob);  // never NULL: {} binds x''
  // Binds values to parameters 1, 2, ... in order.
  template <typename... Values>
  Statement& bind_all(const Values&... values) {
    int index = 0;
    (bind(++index, values), ...);
    return *this;
  }

  // Advances to the next row: true when a row is available, false when the statement is done.
  // While the database is locked by another connection the step is retried with a backoff
  // (beyond SQLite's own busy timeout) until a deadline; then it throws SqliteError.
  bool step();
  // Steps a statement that returns no rows (INSERT, UPDATE, ...) to completion.
  void run();
  // Makes the statement ready to run again with new bindings.
  void reset();

  bool column_is_null(int column) const;
  std::int64_t column_int64(int column) const;
  int column_int(int column) const;
  double column_double(int column) const;  // NaN for NULL
  std::string column_text(int column) const;
  std::vector<char> column_blob(int column) const;
  // Reads columns first, first + 1, ... into `fields` in order, each by its type (std::string,
  // int, std::int64_t, double, std::vector<char>): bind_all's inverse.
  template <typename... Fields>
  void read_columns(int first, Fields&... fields) const {
    int column = first;
    (read_column(column++, fields), ...);
  }

 private:
  void read_column(int column, std::string& out) const { out = column_text(column); }
  void read_column(int column, int& out) const { out = column_int(column); }
  void read_column(int column, std::int64_t& out) const { out = column_int64(column); }
  void read_column(int column, double& out) const { out = column_double(column); }
  void read_column(int column, std::vector<char>& out) const { out = column_blob(column); }

  Connection* db_;
  sqlite3_stmt* stmt_ = nullptr;
  bool has_row_ = false;
};

// A transaction: BEGIN on construction (IMMEDIATE for writes, so that a writer waits for the
// lock up front instead of failing on its first write), COMMIT on commit(), ROLLBACK when
// destroyed uncommitted (an exception left the scope). Not nestable.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  Transaction(Connection& db, Kind kind);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Connection& db_;
  bool open_ = true;
};

}  // namespace kt::cache::sql
