// RAII over the SQLite C API. Every failure becomes a SqliteError naming the database path;
// every step retries while another connection holds the lock, up to a deadline.
#include "cache/sql.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>
#include <utility>

#include "core/log.hpp"

namespace kt::cache::sql {

namespace {

// NOTE: busy_timeout (set by the database on open) makes SQLite itself wait for most locks;
// some SQLITE_BUSY results bypass that handler (WAL recovery by another process, a lock
// needed to read the WAL index), so the step retries those up to the same deadline.
constexpr std::chrono::milliseconds kBusyDeadline{10000};
constexpr std::chrono::milliseconds kMaxBusyPause{100};

std::atomic<std::int64_t> g_busy_retries{0};

bool is_busy(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

// Steps `stmt`, retrying SQLITE_BUSY/SQLITE_LOCKED with a doubling pause while no row has
// been produced yet (a retry after a row would repeat rows). Returns SQLite's result code.
int step_retrying(sqlite3_stmt* stmt, bool has_row) {
  const auto deadline = std::chrono::steady_clock::now() + kBusyDeadline;
  std::chrono::milliseconds pause{1};
  while (true) {
    const int rc = sqlite3_step(stmt);
    if (!is_busy(rc) || has_row || std::chrono::steady_clock::now() >= deadline) return rc;
    sqlite3_reset(stmt);
    g_busy_retries.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, kMaxBusyPause);
  }
}

// The first line of a statement, shortened, for error messages.
std::string abbreviate(std::string_view sql) {
  constexpr std::size_t kMaxChars = 80;
  while (!sql.empty() && (sql.front() == ' ' || sql.front() == '\n')) sql.remove_prefix(1);
  std::string_view line = sql.substr(0, sql.find('\n'));
  if (line.size() <= kMaxChars) return std::string(line);
  return std::string(line.substr(0, kMaxChars)) + "...";
}

bool is_unreserved_uri_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '/';
}

}  // namespace

std::int64_t busy_retries() { return g_busy_retries.load(std::memory_order_relaxed); }

bool SqliteError::is_not_a_database() const {
  return primary_code() == SQLITE_NOTADB || primary_code() == SQLITE_CORRUPT;
}

bool SqliteError::is_cant_open() const { return primary_code() == SQLITE_CANTOPEN; }

bool directory_is_writable(const std::string& path) {
  std::error_code error;
  std::filesystem::path directory = std::filesystem::absolute(path, error).parent_path();
  if (error || directory.empty()) directory = ".";
  return access(directory.c_str(), W_OK) == 0;
}

std::string uri_for_path(const std::string& path, bool read_only, bool immutable) {
  if (path == ":memory:") return path;
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) absolute = path;
  // file:// + an absolute path starting with '/' gives an empty authority, so even a path
  // starting with "//" is read as a path. Everything but unreserved characters is escaped,
  // in particular '?', '#' and '%', which SQLite's URI parser would interpret.
  std::string uri = "file://";
  for (const char c : absolute.string()) {
    if (is_unreserved_uri_char(c)) {
      uri += c;
    } else {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    }
  }
  if (read_only) uri += "?mode=ro";
  if (read_only && immutable) uri += "&immutable=1";
  return uri;
}

std::pair<std::string, std::int64_t> Connection::main_file_head(std::size_t bytes) const {
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK ||
      file == nullptr || file->pMethods == nullptr)
    return {"", -1};
  sqlite3_int64 size = -1;
  if (file->pMethods->xFileSize(file, &size) != SQLITE_OK) return {"", -1};
  std::string head(std::min<std::size_t>(bytes, std::size_t(std::max<sqlite3_int64>(size, 0))),
                   '\0');
  if (!head.empty() && file->pMethods->xRead(file, head.data(), int(head.size()), 0) != SQLITE_OK)
    return {"", size};
  return {head, size};
}

Connection Connection::open(const std::string& path, OpenMode mode) {
  // NOTE: SQLITE_OPEN_FULLMUTEX makes the connection safe even if a caller forgets the owner's
  // mutex; the owner's mutex is what keeps multi-statement work (transactions) atomic.
  int flags = SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX;
  flags |= mode == OpenMode::kReadOnly ? SQLITE_OPEN_READONLY
                                       : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const bool read_only = mode == OpenMode::kReadOnly;
  // NOTE: a reader of a WAL database creates and writes the -shm file beside it. Where this
  // process cannot write the directory (a shipped database on a read-only filesystem or in another
  // user's directory), immutable=1 tells SQLite to read the file without the -shm and -wal files
  // and without locks. That assumes nobody writes it meanwhile, and it does not see transactions
  // left in a -wal file: ship a database closed cleanly (checkpointed), as kerntune leaves it.
  const bool immutable = read_only && path != ":memory:" && !directory_is_writable(path);
  const std::string uri = uri_for_path(path, read_only, immutable);
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(uri.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw SqliteError(rc, fmt::format("cannot open database '{}': {}", path, message));
  }
  sqlite3_extended_result_codes(db, 1);
  Connection connection(db, path);
  // A database file may come from anywhere: whatever its schema holds (triggers, views, functions
  // in defaults or indexes), nothing but our own statements runs, and no statement may damage
  // the file's structure (defensive mode).
  constexpr int kRefused[] = {SQLITE_DBCONFIG_ENABLE_TRIGGER, SQLITE_DBCONFIG_ENABLE_VIEW,
                              SQLITE_DBCONFIG_TRUSTED_SCHEMA,
                              SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION};
  for (const int option : kRefused) {
    if (const int refused = sqlite3_db_config(db, option, 0, nullptr); refused != SQLITE_OK)
      connection.fail(refused, fmt::format("sqlite3_db_config({}, 0)", option));
  }
  if (const int defensive = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
      defensive != SQLITE_OK)
    connection.fail(defensive, "sqlite3_db_config(SQLITE_DBCONFIG_DEFENSIVE, 1)");
  connection.exec("PRAGMA trusted_schema = OFF");
  if (immutable) {
    std::error_code error;
    const auto wal_bytes = std::filesystem::file_size(path + "-wal", error);
    if (!error && wal_bytes > 0) {
      logger().warn(
          "database opened immutable in a directory that cannot be written, but its -wal file "
          "holds {} bytes of transactions that are not read path={}; checkpoint it where it "
          "was written (open it read-write once) before shipping it",
          wal_bytes, path);
    }
    logger().debug("database opened immutable path={}", path);
  }
  return connection;
}

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Connection::~Connection() { close(); }

void Connection::close() noexcept {
  if (db_ == nullptr) return;
  // sqlite3_close_v2 defers the close until every statement is finalized; all of ours are
  // RAII objects, so this closes at once.
  const int rc = sqlite3_close_v2(db_);
  if (rc != SQLITE_OK) {
    logger().warn("sqlite close failed path={} error={}", path_, sqlite3_errstr(rc));
  }
  db_ = nullptr;
}

void Connection::exec(std::string_view sql) {
  const char* tail = sql.data();
  const char* const end = sql.data() + sql.size();
  while (tail < end) {
    sqlite3_stmt* raw = nullptr;
    const char* next = nullptr;
    const int prepared = sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &raw, &next);
    if (prepared != SQLITE_OK) fail(prepared, abbreviate(std::string_view(tail, end - tail)));
    if (raw == nullptr) break;  // only whitespace or comments remain
    const int rc = step_retrying(raw, false);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
      const std::string what = abbreviate(sqlite3_sql(raw));
      sqlite3_finalize(raw);
      fail(rc, what);
    }
    sqlite3_finalize(raw);
    if (next == nullptr || next <= tail) break;
    tail = next;
  }
}

std::int64_t Connection::changes() const { return sqlite3_changes64(db_); }

void Connection::fail(int code, std::string_view what) const {
  std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  std::string text = fmt::format("database '{}': {} (while running: {})", path_, message, what);
  if (is_busy(code)) {
    text +=
        fmt::format("; another process held the database for more than {} s: retry when it is done",
                    kBusyDeadline.count() / 1000);
  }
  const int primary = code & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_IOERR) {
    text += fmt::format(
        "; the file is damaged or unreadable: `kerntune doctor --db '{}'` checks it, and moving "
        "it aside lets kerntune start a new one",
        path_);
  }
  throw SqliteError(code, text);
}

Statement::Statement(Connection& db, std::string_view sql) : db_(&db) {
  const int rc =
      sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    db.fail(rc, abbreviate(sql));
  }
  if (stmt_ == nullptr) {
    throw Error(ErrorKind::kInternal, fmt::format("empty SQL statement: '{}'", sql));
  }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), has_row_(other.has_row_) {}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_->fail(rc, fmt::format("bind parameter {}", index));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) db_->fail(rc, fmt::format("bind parameter {}", index));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  // NOTE: a null data pointer would bind NULL; an empty string_view may have one.
  const char* data = text.empty() ? "" : text.data();
  const int rc =
      sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_->fail(rc, fmt::format("bind parameter {}", index));
  return *this;
}

Statement& Statement::bind(int index, const std::vector<char>& blob) {
  // NOTE: sqlite3_bind_blob with zero bytes binds NULL; a zero-length blob needs zeroblob.
  const int rc =
      blob.empty() ? sqlite3_bind_zeroblob(stmt_, index, 0)
                   : sqlite3_bind_blob64(stmt_, index, blob.data(), blob.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_->fail(rc, fmt::format("bind parameter {}", index));
  return *this;
}

bool Statement::step() {
  const int rc = step_retrying(stmt_, has_row_);
  if (rc == SQLITE_ROW) {
    has_row_ = true;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, abbreviate(sqlite3_sql(stmt_)));
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  // The error of a failed step was already reported by step(); reset() repeats it.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  has_row_ = false;
}

bool Statement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

int Statement::column_int(int column) const {
  const std::int64_t value = sqlite3_column_int64(stmt_, column);
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw SqliteError(SQLITE_MISMATCH,
                      fmt::format("database '{}': column {} of '{}' holds {}, out of int range",
                                  db_->path(), column, abbreviate(sqlite3_sql(stmt_)), value));
  }
  return static_cast<int>(value);
}

double Statement::column_double(int column) const {
  if (column_is_null(column)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::vector<char> Statement::column_blob(int column) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || size <= 0) return {};
  return std::vector<char>(data, data + size);
}

Transaction::Transaction(Connection& db, Kind kind) : db_(db) {
  db_.exec(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

Transaction::~Transaction() {
  // A failed COMMIT may already have rolled back (autocommit is then on again).
  if (!open_ || sqlite3_get_autocommit(db_.handle()) != 0) return;
  const int rc = sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    logger().warn("sqlite rollback failed path={} error={}", db_.path(),
                  sqlite3_errmsg(db_.handle()));
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace kt::cache::sql
