// The private state behind kt::cache::Database, shared by the files that implement its members
// (database.cpp, run_state.cpp). Not part of the cache's interface.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "cache/database.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"

namespace kt::cache {

// Every public member locks `mutex` for its whole body, so one Database may be shared by
// threads (the tuner compiles and stores candidates in parallel).
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

}  // namespace kt::cache
