#include "pg_session.hpp"

#include "adapters/sql/quoted.hpp"

#include <stdexcept>

namespace dibs::chaos {

pg_session::pg_session(const std::string& uri, const std::string& name) {
  auto conninfo = pg::parse_pg_uri(uri).conninfo;
  conninfo += (conninfo.find('?') == std::string::npos ? "?" : "&") + std::string("application_name=") + name;
  pg::connect_settings s;
  s.conninfo = conninfo;
  s.connect_timeout = std::chrono::seconds(10);
  conn_ = pg::pg_connection::connect_blocking(s);
}

void pg_session::execute(const std::string& sql, params p) { rows(sql, std::move(p)); }

std::vector<pg_session::row> pg_session::rows(const std::string& sql, params p) {
  try {
    return conn_->exec_blocking(pg::statement{sql, std::move(p)}).rows;
  } catch (const pg::pg_error& e) {
    throw std::runtime_error(std::string("chaos: ") + e.what() + " (in: " + sql.substr(0, 200) + ")");
  }
}

std::uint64_t pg_session::number(const std::string& sql, params p) {
  const auto r = rows(sql, std::move(p));
  return r.empty() || r[0].empty() || !r[0][0] ? 0 : std::stoull(*r[0][0]);
}

std::string pg_session::quote(const std::string& v) { return sql_common::quoted(v, '\''); }

}  // namespace dibs::chaos
