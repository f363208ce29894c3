// The private state behind kt::cache::Database and the helpers shared by the files that
// implement its members (database.cpp, database_files.cpp, run_state.cpp). Not part of the
// cache's interface.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"

namespace kt::cache {

// Every public member locks `mutex` for its whole body (through Locked), so one Database may be
// shared by threads (the tuner compiles and stores candidates in parallel).
struct Database::Impl {
  Impl(std::string path, sql::Connection db) : path(std::move(path)), db(std::move(db)) {}
  std::string path;
  std::mutex mutex;  // guards db: one statement or transaction at a time
  sql::Connection db;
};

// The Impl of a Database, or kt::Error for a moved-from one (instead of a crash). A template,
// so that it may name the private Database::Impl through deduction.
template <typename Impl>
Impl& checked(const std::unique_ptr<Impl>& impl) {
  if (!impl) throw Error(ErrorKind::kInternal, "use of a moved-from kt::cache::Database");
  return *impl;
}

// The Impl of a Database with its mutex held until the end of the scope: how a public member
// takes it, first thing (kt::Error for a moved-from Database, as checked()).
template <typename Impl>
class Locked {
 public:
  explicit Locked(const std::unique_ptr<Impl>& impl) : impl_(checked(impl)), lock_(impl_.mutex) {}
  Impl* operator->() const { return &impl_; }

 private:
  Impl& impl_;
  std::lock_guard<std::mutex> lock_;
};

// The TuningKey stored in columns first to first + 3 of `row`: problem_key, device_fingerprint,
// protocol_version, template_version (the order of every table that stores one).
inline TuningKey read_tuning_key(const sql::Statement& row, int first) {
  TuningKey key;
  row.read_columns(first, key.problem_key, key.device_fingerprint, key.protocol_version,
                   key.template_version);
  return key;
}

// A WHERE clause's match of one TuningKey, its four parameters first and in the order
// bind_tuning_key binds them.
inline constexpr const char* kTuningKeyMatch =
    "problem_key = ? AND device_fingerprint = ? AND protocol_version = ? AND template_version = ?";

// Binds `key` to parameters 1 to 4 of a statement whose WHERE clause starts with kTuningKeyMatch.
inline sql::Statement& bind_tuning_key(sql::Statement& query, const TuningKey& key) {
  return query.bind_all(key.problem_key, key.device_fingerprint, key.protocol_version,
                        key.template_version);
}

// A connection to a kerntune file that exists and needs no migration, for reading only
// (kt::Error naming the path and what to do otherwise).
sql::Connection open_existing_readonly(const std::string& path);

// Whether two paths name one file (never for ":memory:").
bool same_file(const std::string& a, const std::string& b);

}  // namespace kt::cache
