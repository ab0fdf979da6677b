// The PostgreSQL store (libpq; PostgreSQL 12+): a job table claimed in batches with one
// UPDATE ... FOR UPDATE SKIP LOCKED statement (pg_protocol.hpp has every statement).
//
// No thread pool: each shard (each io_context that calls the store) has its own connection,
// driven by libpq's non-blocking API on that io_context (pg_connection.hpp); a shard's calls take
// turns on it. The admin calls (seed, stats_blocking: the CLI's, never a shard's) use one more
// connection, blocking. A dropped connection is replaced and the statement tried again once.
// All times are the database's (now()).
#pragma once

#include <adapters/postgres/pg_connection.hpp>
#include <adapters/postgres/pg_listener.hpp>
#include <adapters/postgres/pg_protocol.hpp>

#include <dibs/admin_store.hpp>
#include <dibs/stores/sql_admin_store.hpp>
#include <dibs/recorded_settings.hpp>
#include <dibs/stores/sql_table_names.hpp>
#include <dibs/stores/own_records.hpp>
#include <dibs/stores/store_console.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace dibs::pg {

using sql_common::on_done;  // sql_table_names.hpp

// Nothing of its own beyond what both SQL stores take (sql_table_options).
struct pg_options : sql_common::sql_table_options {};

class pg_store final : public sql_common::sql_admin_store<admin_store>,
                       public own_records,
                       public counted_statements,
                       public sql_console,
                       public std::enable_shared_from_this<pg_store> {
 public:
  explicit pg_store(pg_options opts);
  ~pg_store() override;

  awaitable<std::vector<job>> claim(claim_request req) override;
  awaitable<write_result> complete(std::vector<completion> batch) override;
  awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) override;
  awaitable<write_result> release(std::vector<release_item> batch) override;
  awaitable<write_result> fail(std::vector<failure> batch) override;
  awaitable<store_stats> stats() override;

  std::string describe() const override;

  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  std::size_t seed_skewed(std::size_t n, std::uint64_t seed, std::size_t distinct) override;
  store_stats stats_blocking() override;
  // follow: LISTEN on the table's channel (pg_listener.hpp); false when it can't.
  bool watch(std::function<void()> on_change) override;
  void stop_watching() override;
  void check_write_rights() override;
  // Records `r` for this table in dibs_settings (dibs init; pg_settings.cpp).
  void write_settings_record(const settings_record& r);
  // counted_statements: statements the engine's calls sent (claims, writes, counts; not the admin
  // connection's): dibs bench's statements per document; always counted.
  std::optional<std::uint64_t> statements_sent() const override { return statements_.load(); }
  // own_records: dibs's tables (collections) beside the user's (mysql_records.cpp, pg_records.cpp, mongo_records.cpp).
  std::shared_ptr<record_table> open_records(const record_kind& kind, bool create = true) override;

  // One more connection of this store's settings, blocking, for a caller's own use (dibs's own
  // records: pg_records.cpp).
  std::unique_ptr<pg_connection> connect_blocking() const { return pg_connection::connect_blocking(link_); }

  // Tests: drop and recreate the table.
  void reset_table();
  // sql_console (dibs bench's scratch tables, tests; on the admin connection).
  void execute(const std::string& sql) override;
  std::optional<std::string> query_value(const std::string& select) override;
  const table_names& names() const { return names_; }

 private:
  // sql_admin_link: the operator's questions in PostgreSQL's words, on the admin connection (pg_store_admin.cpp).
  std::vector<sql_common::admin_row> ask(const sql_common::admin_question& question) override;
  std::uint64_t change(const sql_common::admin_change& what) override;
  facts admin_facts() const override;
  pending_sample sampled(const sql_common::admin_row& row, bool has_source, std::vector<std::string> columns) const override;
  // Runs one statement on the calling shard's connection; throws store_refused for a refused
  // content, pg_error otherwise.
  awaitable<pg_result> run(statement st);
  // One fenced write (complete, renew, release, fail): the batch's refs (an id this table's key
  // can't hold is a lost lease at once), the statement `build(refs, kept, res)` makes of them
  // (nullopt: nothing to send; it may drop refs it refuses), run; `read(res, refs, answer)` takes
  // what else the answer says, and the ids it names are tallied as written, the others as lost.
  template <class Result, class Item, class Build, class Read>
  awaitable<Result> fenced_write(std::vector<Item> batch, Build build, Read read);
  template <class F>
  auto with_admin(F f);
  void create_schema();
  void prepare_table(const settings_record& recorded);
  settings_record read_settings_record();  // pg_settings.cpp
  settings_record apply_settings_record();  // returns the record read
  // The GRANT that gives the store's role every right the run needs.
  std::string grant() const;

  bool table_named_ = false;  // the URI says ?table= (a refusal of the default, jobs, says so)
  pg_options opts_;
  table_names names_;
  connect_settings link_;
  std::string shown_;
  std::string role_ = "CURRENT_USER";  // the store's role, as the server names it
  std::uint64_t serial_;  // names this store's connections in each io_context
  std::mutex admin_mutex_;
  std::unique_ptr<pg_connection> admin_;
  std::unique_ptr<pg_listener> listener_;
  std::atomic<std::uint64_t> statements_{0};
};

}  // namespace dibs::pg
