#include "pg_rights_probe.hpp"
#include "adapters/postgres/pg_quote.hpp"

#include <adapters/sql/own_columns.hpp>

namespace dibs::pg {

std::vector<rights_probe> rights_probes(const table_names& n, bool deletes) {
  auto written = sql_common::written_columns();
  written.insert(written.begin(), n.target);
  return dibs::rights_probes(n.table, n.key.column, n.source, written, deletes, q);
}

std::string grant_statement(const table_names& n, const std::string& role, bool deletes) {
  return "GRANT " + rights_needed(deletes) + " ON " + q(n.table) + " TO " + q(role);
}

}  // namespace dibs::pg
