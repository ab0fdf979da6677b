#include "pg_rights_probe.hpp"
#include "adapters/postgres/pg_quote.hpp"

namespace dibs::pg {

std::vector<rights_probe> rights_probes(const table_names& n, bool deletes) {
  return dibs::rights_probes(n.table, n.key.column, n.source, n.target, deletes, q);
}

std::string grant_statement(const table_names& n, const std::string& role, bool deletes) {
  return "GRANT " + rights_needed(deletes) + " ON " + q(n.table) + " TO " + q(role);
}

}  // namespace dibs::pg
