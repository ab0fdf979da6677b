// One MySQL/MariaDB connection (MariaDB Connector/C), blocking, as mysql_store's pool lends it:
// its session set up (UTC, READ COMMITTED where the server allows it, MariaDB's idle
// transaction timeout), statements counted for dibs bench, and a server's error turned into an
// sql_error that carries its code and its words, never the statement (which may hold data).
#pragma once

#include <dibs/stores/mysql_store.hpp>
#include <adapters/mysql/mysql_uri.hpp>
#include <adapters/mysql/mysql_row_key.hpp>
#include <adapters/mysql/mysql_session.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct st_mysql;

namespace dibs::mysql {

class mysql_connection final : public mysql_session {
 public:
  // Connects and sets the session up; throws sql_error ("cannot connect to MySQL/MariaDB at ...").
  mysql_connection(const mysql_uri& u, const mysql_options& o, std::atomic<std::uint64_t>& sent);
  ~mysql_connection() override;
  mysql_connection(const mysql_connection&) = delete;
  mysql_connection& operator=(const mysql_connection&) = delete;

  void execute(const std::string& sql) override;
  std::vector<sql_row> select(const std::string& sql) override;
  std::string quote(const std::string& v) override;
  std::uint64_t affected() override;
  // Which of the URI's hosts this connection went to (mysql_store's pool moves on from it when
  // its server is gone).
  std::size_t host_index = 0;

 private:
  void set_up_session(const mysql_options& o);
  [[noreturn]] void fail(const std::string& sql);
  st_mysql* db() const { return db_.get(); }
  std::atomic<std::uint64_t>& sent_;  // the store's statement count
  // Owned, so a constructor that throws after connecting still closes the link (mysql_close).
  std::unique_ptr<st_mysql, void (*)(st_mysql*)> db_{nullptr, nullptr};
};

// A transaction that rolls back unless committed.
class transaction {
 public:
  explicit transaction(mysql_connection& c) : c_(c) { c_.execute("START TRANSACTION"); }
  ~transaction();
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  void commit();

 private:
  mysql_connection& c_;
  bool done_ = false;
};

// A count the server sent (NULL is 0).
std::uint64_t to_u64(const std::optional<std::string>& s);

quote_fn quote_with(mysql_connection& c);

}  // namespace dibs::mysql
