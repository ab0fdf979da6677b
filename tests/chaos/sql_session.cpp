#include "sql_session.hpp"

#include <adapters/mysql/mysql_uri.hpp>

#include <mysql.h>

#include <stdexcept>

namespace dibs::chaos {

sql_session::sql_session(const std::string& uri, std::int64_t as_pid) {
  const auto u = mysql::parse_mysql_uri(uri);
  db_ = mysql_init(nullptr);
  if (!db_) throw std::runtime_error("mysql_init failed");
  if (!mysql_real_connect(db_, u.host.c_str(), u.user.c_str(), u.password.c_str(), u.database.c_str(), u.port,
                          u.socket.empty() ? nullptr : u.socket.c_str(), 0)) {
    const std::string why = mysql_error(db_);
    mysql_close(db_);
    throw std::runtime_error("chaos: cannot connect to MariaDB: " + why);
  }
  execute("SET SESSION time_zone = '+00:00', @dibs_client_pid = " + std::to_string(as_pid));
}

sql_session::~sql_session() { mysql_close(db_); }

void sql_session::execute(const std::string& sql) {
  if (mysql_real_query(db_, sql.data(), sql.size()) != 0)
    throw std::runtime_error(std::string("chaos: ") + mysql_error(db_) + " (in: " + sql.substr(0, 200) + ")");
  if (MYSQL_RES* r = mysql_store_result(db_)) mysql_free_result(r);
}

std::vector<sql_session::row> sql_session::rows(const std::string& sql) {
  if (mysql_real_query(db_, sql.data(), sql.size()) != 0)
    throw std::runtime_error(std::string("chaos: ") + mysql_error(db_) + " (in: " + sql.substr(0, 200) + ")");
  std::vector<row> out;
  MYSQL_RES* r = mysql_store_result(db_);
  if (!r) return out;
  const unsigned n = mysql_num_fields(r);
  for (MYSQL_ROW cells; (cells = mysql_fetch_row(r)) != nullptr;) {
    const unsigned long* lengths = mysql_fetch_lengths(r);
    auto& x = out.emplace_back(n);  // NULL cells stay empty
    for (unsigned i = 0; i < n; ++i)
      if (cells[i]) x[i].emplace(cells[i], lengths[i]);
  }
  mysql_free_result(r);
  return out;
}

std::uint64_t sql_session::number(const std::string& sql) {
  const auto r = rows(sql);
  return r.empty() || r[0].empty() || !r[0][0] ? 0 : std::stoull(*r[0][0]);
}

std::string sql_session::quote(const std::string& v) {
  std::string out(v.size() * 2 + 3, '\0');
  out[0] = '\'';
  const auto n = mysql_real_escape_string(db_, out.data() + 1, v.data(), v.size());
  out.resize(n + 1);
  return out + '\'';
}

}  // namespace dibs::chaos
