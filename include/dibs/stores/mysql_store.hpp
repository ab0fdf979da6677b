// The MySQL / MariaDB store (MariaDB Connector/C; MySQL 8 and MariaDB 10.6+): a job table
// claimed in batches with SELECT ... FOR UPDATE SKIP LOCKED.
// Every driver call runs on the offload pool, one connection per pool thread; a dropped
// connection is replaced and the call tried again once; a URI naming several hosts
// (mysql://u@h1:p1,h2:p2/db) moves on to the next one when its server is gone.
//
//   claim     BEGIN; SELECT <claimable> rows from a random point of the dibs_pick key
//             LIMIT B FOR UPDATE SKIP LOCKED; UPDATE the lease; COMMIT (a commit lost to
//             another cluster node, Galera's certification failure, is a claim conflict:
//             claimed again)
//   complete  BEGIN; SELECT the rows still held (id + token + by + until >= NOW(6)) FOR UPDATE;
//             UPDATE (or DELETE, on_done delete) exactly those; COMMIT
//   renew, release, fail: the same shape, so the adapter knows exactly which rows lost their lease.
// All times are the database's (NOW(6)), in UTC.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <dibs/blocking_store.hpp>
#include <dibs/stores/sql_admin_store.hpp>
#include <dibs/recorded_settings.hpp>
#include <dibs/stores/own_records.hpp>
#include <dibs/stores/store_console.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dibs::mysql {

class mysql_session;

using sql_common::on_done;  // sql_table_names.hpp

struct mysql_options : sql_common::sql_table_options {
  std::size_t threads = 4;
  // MariaDB ends a session left idle inside a transaction this long (idle_transaction_timeout),
  // so a worker whose host vanished without closing its connection holds its row locks (which
  // SKIP LOCKED claims pass over) no longer than this. dibs sends a transaction's statements
  // back to back, so only a stalled or vanished client meets it. MySQL has no such setting
  // (its wait_timeout bounds such a session instead); 0 leaves the server's default.
  std::chrono::seconds idle_transaction_timeout{30};
};

class sql_error : public std::runtime_error {
 public:
  sql_error(const std::string& what, unsigned code, std::string server_message = {})
      : std::runtime_error(what), code(code), server_message(std::move(server_message)) {}
  unsigned code;
  std::string server_message;  // the server's own words, without the statement (which may hold data)
  bool connection_lost() const;
  // A deadlock or lock-wait timeout: the server rolled the transaction back; run it again.
  bool retry_transaction() const;
};

class mysql_store final : public sql_common::sql_admin_store<blocking_store>,
                          public own_records,
                          public counted_statements,
                          public sql_console,
                          public std::enable_shared_from_this<mysql_store> {
 public:
  explicit mysql_store(mysql_options opts);
  ~mysql_store() override;

  std::string describe() const override;

  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  std::size_t seed_skewed(std::size_t n, std::uint64_t seed, std::size_t distinct) override;
  store_stats stats_blocking() override;
  void check_write_rights() override;
  // The largest statement the server takes (its max_allowed_packet, read at start).
  std::size_t max_statement_bytes() const;
  // counted_statements: every statement sent to the server since the store opened (dibs
  // bench's statements per document); always counted.
  std::optional<std::uint64_t> statements_sent() const override { return statements_.load(); }
  // own_records: dibs's tables (collections) beside the user's (mysql_records.cpp, pg_records.cpp, mongo_records.cpp).
  std::shared_ptr<record_table> open_records(const record_kind& kind, bool create = true) override;

  std::vector<job> claim_blocking(const claim_request& req) override;
  // Claims that lost their rows to another claimer at commit and were run again (on a Galera
  // cluster, certification failures: error 1213).
  std::uint64_t claim_conflicts() const override;
  write_result complete_blocking(const std::vector<completion>& batch) override;
  renew_result renew_blocking(const std::vector<renewal>& batch, millis lease) override;
  write_result release_blocking(const std::vector<release_item>& batch) override;
  write_result fail_blocking(const std::vector<failure>& batch) override;

  // One pooled connection, lent with no transaction: each statement commits by itself (dibs's
  // own records: mysql_records.cpp; dibs init's settings).
  void in_session(const std::function<void(mysql_session&)>& body);

  // Tests: drop and recreate the table.
  void reset_table();
  // sql_console (dibs bench's scratch tables, tests).
  void execute(const std::string& statement) override;
  std::optional<std::string> query_value(const std::string& select) override;

 private:
  // sql_admin_link: the operator's questions in MySQL/MariaDB's words (mysql_store_admin.cpp).
  std::vector<sql_common::admin_row> ask(const sql_common::admin_question& question) override;
  std::uint64_t change(const sql_common::admin_change& what) override;
  facts admin_facts() const override;
  pending_sample sampled(const sql_common::admin_row& row, bool has_source, std::vector<std::string> columns) const override;

  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<std::uint64_t> statements_{0};  // every mysql_real_query, for dibs bench
};

}  // namespace dibs::mysql

namespace dibs {
// The namespace's former name (it read like a layer shared by every SQL store; that is
// adapters/sql, dibs::sql_common), kept for code written against it.
namespace sql = mysql;
}  // namespace dibs
