#include "rights_probe.hpp"
#include "adapters/mysql/mysql_quote.hpp"

#include <adapters/sql/own_columns.hpp>

namespace dibs::mysql {

namespace {
std::string quoted(const std::string& v) { return sql_common::quoted(v, '\''); }
}  // namespace

std::vector<rights_probe> rights_probes(const table_names& n, bool deletes) {
  auto written = sql_common::written_columns();
  written.insert(written.begin(), n.target);
  return dibs::rights_probes(n.table, n.key.column, n.source, written, deletes, q);
}

std::string grant_statement(const table_names& n, const std::string& database, const std::string& current_user,
                            bool deletes) {
  const auto at = current_user.rfind('@');
  const std::string to = at == std::string::npos ? quoted(current_user)
                                                 : quoted(current_user.substr(0, at)) + "@" + quoted(current_user.substr(at + 1));
  return "GRANT " + rights_needed(deletes) + " ON " + q(database) + "." + q(n.table) + " TO " + to;
}

}  // namespace dibs::mysql
