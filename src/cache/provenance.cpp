// The provenance table of a database (database.hpp: provenance, set_provenance): name -> value
// rows that a fleet shard or bundle writes about itself.
#include <fmt/format.h>

#include "cache/database.hpp"
#include "cache/database_impl.hpp"
#include "cache/sql.hpp"
#include "core/error.hpp"

namespace kt::cache {

std::map<std::string, std::string> Database::provenance() const {
  const Locked impl(impl_);
  sql::Statement query(impl->db, "SELECT name, value FROM provenance ORDER BY name");
  std::map<std::string, std::string> rows;
  while (query.step()) rows.emplace(query.column_text(0), query.column_text(1));
  return rows;
}

void Database::set_provenance(const std::map<std::string, std::string>& rows) {
  for (const auto& [name, value] : rows)
    if (name.empty()) throw_invalid("set_provenance: a provenance name is empty");
  const Locked impl(impl_);
  sql::Transaction transaction(impl->db, sql::Transaction::Kind::kWrite);
  sql::Statement erase(impl->db, "DELETE FROM provenance");
  erase.run();
  sql::Statement insert(impl->db, "INSERT INTO provenance (name, value) VALUES (?, ?)");
  for (const auto& [name, value] : rows) {
    insert.reset();
    insert.bind_all(name, value).run();
  }
  transaction.commit();
}

}  // namespace kt::cache
