#include <dibs/stores/mysql_store.hpp>

#include "mysql_endpoint.hpp"
#include "mysql_settings.hpp"

#include "claimed_rows.hpp"
#include "fenced_rows.hpp"
#include "mysql_tls.hpp"
#include "mysql_uri.hpp"
#include "rights_probe.hpp"
#include "row_key.hpp"
#include "server_errors.hpp"
#include "server_limits.hpp"
#include "sql_protocol.hpp"
#include "sql_retry.hpp"
#include "sql_session.hpp"
#include "sql_workers.hpp"
#include "table_schema.hpp"

#include "engine/src/close_on_exec.hpp"
#include "engine/src/init_hint.hpp"
#include <dibs/ipv4_ranges.hpp>
#include "engine/src/skewed_draw.hpp"
#include <dibs/log.hpp>
#include <dibs/missing_table_error.hpp>
#include "engine/src/reason_text.hpp"
#include "engine/src/rights_refusal.hpp"
#include "engine/src/server_number.hpp"
#include "engine/src/uri_redact.hpp"
#include "engine/src/worker_id.hpp"

#include <mysql.h>
#include <unistd.h>
#include <errmsg.h>

#include <mutex>
#include <random>
#include <optional>
#include <unordered_set>

namespace dibs::sql {

bool sql_error::connection_lost() const { return classify(code) == error_class::link_lost; }
bool sql_error::retry_transaction() const { return classify(code) == error_class::rerun; }

namespace {

std::once_flag g_library;

std::mt19937_64& rng() {
  thread_local std::mt19937_64 r{std::random_device{}()};
  return r;
}
std::uint64_t fresh_token() {
  std::uint64_t t;
  do t = rng()() >> 1; while (t == 0);  // BIGINT UNSIGNED holds it; >>1 keeps it printable as signed too
  return t;
}

std::int64_t micros(std::chrono::milliseconds d) { return d.count() * 1000; }

using row = sql_row;

class connection final : public sql_session {
 public:
  connection(const mysql_uri& u, const mysql_options& o, std::atomic<std::uint64_t>& sent) : sent_(sent) {
    std::call_once(g_library, [] { mysql_library_init(0, nullptr, nullptr); });
    db_.reset(mysql_init(nullptr));
    if (!db_) throw sql_error("mysql_init failed (out of memory)", 0);
    unsigned connect_timeout = static_cast<unsigned>(o.connect_timeout.count());
    unsigned io_timeout = static_cast<unsigned>(o.io_timeout.count());
    ::mysql_options(db(), MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout);
    ::mysql_options(db(), MYSQL_OPT_READ_TIMEOUT, &io_timeout);
    ::mysql_options(db(), MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
    ::mysql_options(db(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
    set_tls_options(db(), u);
    const std::string where = "cannot connect to MySQL/MariaDB at " + endpoint_text(u, std::getenv("MYSQL_UNIX_PORT"));
    if (!mysql_real_connect(db(), u.host.c_str(), u.user.c_str(), u.password.c_str(), u.database.c_str(), u.port,
                            u.socket.empty() ? nullptr : u.socket.c_str(), 0)) {
      const auto code = mysql_errno(db());
      throw sql_error(where + ": " + mysql_error(db()) +
                          (code == CR_SSL_CONNECTION_ERROR ? " (TLS with " + describe_tls(u) + ")" : endpoint_hint(u)),
                      code);
    }
    if (const auto why = tls_shortfall(db(), u); !why.empty()) throw sql_error(where + ": " + why, CR_SSL_CONNECTION_ERROR);
    // The client library opens its socket without SOCK_CLOEXEC: mark it now (see close_on_exec.hpp).
    close_on_exec(static_cast<int>(mysql_get_socket(db())));
    try {
      set_up_session(o);
    } catch (const sql_error& e) {
      // The link went in the session's first statements (a server restarting, a proxy resetting
      // right after the handshake): that is a failed connect too, and says so. Before, the user
      // read only "Server has gone away (error 2006)", with no word of connecting.
      if (classify(e.code) != error_class::link_lost) throw;
      throw sql_error(where + ": the connection was lost while its session was set up (" + e.what() + ")", e.code);
    }
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  void set_up_session(const mysql_options& o) {
    // DATETIME values are UTC. @dibs_client_pid names this process to the server, so an audit
    // trigger (the chaos checker's) can tell which process made each write; it costs nothing more.
    execute("SET SESSION time_zone = '+00:00', @dibs_client_pid = " + std::to_string(::getpid()));
    // READ COMMITTED: a claim's index scan then takes no gap locks, which under REPEATABLE READ
    // held up producers' INSERTs and other claims' lease UPDATEs (they move the row's index
    // entry) until the claim committed. Every statement here locks what it reads, by key or
    // with SKIP LOCKED, so no statement relies on a repeatable snapshot.
    const auto logging = select("SELECT @@log_bin, @@SESSION.binlog_format");
    const bool log_bin = !logging.empty() && logging[0].size() == 2 && logging[0][0].value_or("0") == "1";
    const auto format = logging.empty() || logging[0].size() < 2 ? std::string() : logging[0][1].value_or("");
    if (read_committed_allowed(log_bin, format)) {
      execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    } else {
      static std::once_flag told;
      std::call_once(told, [] {
        log::info("mysql: the server writes its binary log as statements (binlog_format=STATEMENT): sessions stay at "
                  "REPEATABLE READ, where claims wait more on gap locks (ROW or MIXED lifts this)");
      });
    }
    if (o.idle_transaction_timeout.count() > 0) {
      try {
        execute("SET SESSION idle_transaction_timeout = " + std::to_string(o.idle_transaction_timeout.count()));
      } catch (const sql_error& e) {
        if (e.code != 1193) throw;  // ER_UNKNOWN_SYSTEM_VARIABLE: MySQL, not MariaDB
      }
    }
  }

  void execute(const std::string& sql) override {
    sent_.fetch_add(1, std::memory_order_relaxed);
    if (mysql_real_query(db(), sql.data(), sql.size()) != 0) fail(sql);
    // Statements that return rows must be drained even when the caller wants none.
    if (MYSQL_RES* r = mysql_store_result(db())) mysql_free_result(r);
  }

  std::vector<row> select(const std::string& sql) override {
    sent_.fetch_add(1, std::memory_order_relaxed);
    if (mysql_real_query(db(), sql.data(), sql.size()) != 0) fail(sql);
    MYSQL_RES* r = mysql_store_result(db());
    if (!r) {
      if (mysql_errno(db())) fail(sql);
      return {};
    }
    std::vector<row> out;
    const unsigned n = mysql_num_fields(r);
    while (MYSQL_ROW cells = mysql_fetch_row(r)) {
      unsigned long* lengths = mysql_fetch_lengths(r);
      row x(n);
      for (unsigned i = 0; i < n; ++i)
        if (cells[i]) x[i] = std::string(cells[i], lengths[i]);
      out.push_back(std::move(x));
    }
    mysql_free_result(r);
    return out;
  }

  std::uint64_t affected() { return mysql_affected_rows(db()); }

  std::string quote(const std::string& v) override {
    std::string out(v.size() * 2 + 3, '\0');
    out[0] = '\'';
    const auto n = mysql_real_escape_string(db(), out.data() + 1, v.data(), v.size());
    out.resize(n + 1);
    out += '\'';
    return out;
  }

 private:
  // The server's words and code make the error; the statement (which may hold data) goes to the
  // debug log only.
  [[noreturn]] void fail(const std::string& sql) {
    const std::string said = mysql_error(db());
    const auto code = mysql_errno(db());
    log::debug("mysql: error ", code, " (", said, ") in: ", sql.substr(0, 2000));
    throw sql_error("MySQL/MariaDB said: " + said + " (error " + std::to_string(code) + ")", code, said);
  }
  MYSQL* db() const { return db_.get(); }
  std::atomic<std::uint64_t>& sent_;  // the store's statement count
  // Owned, so a constructor that throws after connecting still closes the link.
  std::unique_ptr<MYSQL, decltype(&mysql_close)> db_{nullptr, &mysql_close};
};

// A transaction that rolls back unless committed.
class transaction {
 public:
  explicit transaction(connection& c) : c_(c) { c_.execute("START TRANSACTION"); }
  ~transaction() {
    if (!done_) {
      try {
        c_.execute("ROLLBACK");
      } catch (...) {
      }
    }
  }
  void commit() {
    c_.execute("COMMIT");
    done_ = true;
  }

 private:
  connection& c_;
  bool done_ = false;
};

// A count the server sent (NULL is 0).
std::uint64_t to_u64(const std::optional<std::string>& s) { return server_number<std::uint64_t>(s, "MySQL/MariaDB"); }

quote_fn quote_with(connection& c) {
  return [&c](const std::string& v) { return c.quote(v); };
}

}  // namespace

struct mysql_store::impl {
  impl(mysql_options o, mysql_store& s)
      : opts(std::move(o)), self(s), uri(parse_mysql_uri(opts.uri)) {
    names.table = uri.table;
    names.source = opts.source;
    names.target = opts.target;
    check_names(names);
    shown = redact_uri(opts.uri);
  }

  mysql_options opts;
  mysql_store& self;
  mysql_uri uri;
  table_names names;
  std::string shown;
  server_limits limits;  // read once the first connection is made
  std::string current_user = "CURRENT_USER";  // as the server knows the store's user: user@host
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<connection>> idle;

  std::unique_ptr<connection> acquire() {
    {
      std::lock_guard lock(pool_mutex);
      if (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        return c;
      }
    }
    return std::make_unique<connection>(uri, opts, self.statements_);
  }
  void give_back(std::unique_ptr<connection> c) {
    std::lock_guard lock(pool_mutex);
    idle.push_back(std::move(c));
  }

  // Runs `f(connection&)`; a dropped connection is replaced and `f` tried once more (every
  // operation here is a single transaction, rolled back by the server when the link dies; a
  // COMMIT whose answer was lost -- or delete_returning's autocommitted statement's -- shows up
  // on the retry as leases no longer held: reported lost though written, never written twice).
  template <class F>
  auto with_connection(F f) {
    int attempt_lost = 0;
    for (int attempt = 0;; ++attempt) {
      auto c = acquire();
      try {
        auto result = f(*c);
        give_back(std::move(c));
        return result;
      } catch (const sql_error& e) {
        if (e.retry_transaction() && attempt < 5) {
          give_back(std::move(c));
          continue;
        }
        const auto kind = classify(e.code);
        if (kind == error_class::row_refused) {
          // The statement was refused for a value it carries (the transaction rolled back, the
          // link is fine): the same batch would be refused again. The engine splits it.
          give_back(std::move(c));
          throw store_refused(e.server_message + " (error " + std::to_string(e.code) + ")");
        }
        if (kind == error_class::denied) {
          give_back(std::move(c));
          throw store_denied(rights_refusal(denied_right(e.server_message), names.table, e.server_message, grant()));
        }
        if (kind != error_class::link_lost) throw;
        {
          // The server went away: the other idle connections are most likely dead too.
          std::lock_guard lock(pool_mutex);
          idle.clear();
        }
        if (attempt > 0 && attempt_lost++ > 0) throw;
        log::warn("mysql: connection lost (", e.what(), "); reconnecting");
      }
    }
  }

  // The table as the options allow: created when missing (create_table), else refused by name;
  // the key its rows are addressed by chosen (row_key_pick.hpp), or the table refused when it has
  // none dibs can use; dibs's missing columns and index added (add_columns), else refused with
  // the ALTER TABLE.
  void prepare_table() {
    with_connection([&](connection& c) { return apply_settings_record(c, names, opts), 0; });  // mysql_settings.hpp
    with_connection([&](connection& c) {
      auto columns = c.select(columns_query(names.table));
      if (columns.empty()) {
        if (!opts.create_table) {
          std::vector<std::string> tables;
          for (auto& r : c.select(tables_query())) tables.push_back(r[0].value_or(""));
          throw missing_table_error("table", names.table, "database " + uri.database, std::move(tables),
                                    "dibs enrich and dibs status create no table; create it with: " + hint());
        }
        c.execute(sql::create_table(names));
        columns = c.select(columns_query(names.table));
      }
      const auto pick = pick_row_key(names.table, key_columns(columns), unique_keys(c.select(unique_keys_query(names.table))),
                                     true, make_id_unique(names));
      if (!pick.refusal.empty()) throw std::invalid_argument(pick.refusal);
      // No key yet: dibs init adds `id`, numbered, unique (the gap below names it).
      names.key = pick.add_id ? row_key{"id", key_kind::unsigned_integer, false} : key_of(pick, columns);
      table_shape shape;
      for (auto& r : columns) shape.columns.push_back(r[0].value_or(""));
      for (auto& r : c.select(indexes_query(names.table))) shape.indexes.push_back(r[0].value_or(""));
      const auto gap = find_gap(names, shape);
      if (gap.complete()) return 0;
      // The CLI names the flag that chose this column and the one the user probably meant.
      if (gap.source_missing) throw missing_table_error::source_column(names.source, names.table, shape.columns);
      if (!opts.add_columns) throw std::invalid_argument(gap_message(names, gap, hint()));
      log::info("mysql: adding to table ", names.table, ": ", alter_table(names, gap));
      c.execute(alter_table(names, gap));
      return 0;
    });
    log::debug("mysql: rows of ", names.table, " are addressed by their key ", names.key.column);
  }
  std::string hint() const { return init_hint(shown, names.source, names.target); }
  std::string grant() const { return grant_statement(names, uri.database, current_user, opts.done == on_done::remove); }

  // Each probe of rights_probes in one transaction, rolled back: the first one the server
  // refuses for want of a right names it.
  void check_write_rights() {
    with_connection([&](connection& c) {
      transaction tx(c);
      for (const auto& probe : rights_probes(names, opts.done == on_done::remove)) {
        try {
          c.execute(probe.sql);
        } catch (const sql_error& e) {
          if (classify(e.code) != error_class::denied) throw;
          throw std::invalid_argument(rights_refusal(probe.right, names.table, e.server_message, grant()));
        }
      }
      return 0;
    });
  }

  // One transaction: the rows are found and locked by one statement (claim_rows, SKIP LOCKED)
  // from a random point of the pick key, then leased. Another claimer's rows are skipped while
  // it holds them, so claimers (the shards of this process and every other process) never meet:
  // there is no candidate read that could go stale, hence no claim conflicts.
  std::vector<job> claim(const claim_request& req) {
    return with_connection([&](connection& c) {
      const auto grace = micros(req.grace);
      const auto lease = micros(req.lease);
      const int from = static_cast<int>(rng()() % 256);
      transaction tx(c);
      auto rows = c.select(claim_rows(names, grace, from, true, req.max, lease));
      if (rows.size() < req.max && from > 0) {
        auto more = c.select(claim_rows(names, grace, from, false, req.max - rows.size(), lease));
        rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
      }
      if (rows.empty()) return std::vector<job>{};  // nothing claimable now: the transaction rolls back
      std::vector<std::string> keys;
      std::vector<job> out;
      const auto token = fresh_token();
      for (auto& r : rows) {
        // (A key is never NULL and always prints as a literal of its kind: the pick made sure.)
        const auto key = key_literal(names.key, r[0].value_or(""), quote_with(c));
        if (!key) continue;
        auto j = claimed_job(r, req.by, token, names.source);
        // Claimed max_attempts times already (each lease ran out with no outcome): failed in this
        // transaction rather than leased again (claim_request::max_attempts).
        if (req.max_attempts > 0 && j.attempts > req.max_attempts) {
          c.execute(fail_row(names, *key, c.quote(exhausted_attempts_reason(j.attempts - 1)), 0));
          continue;
        }
        keys.push_back(*key);
        out.push_back(std::move(j));
      }
      if (keys.empty()) {
        tx.commit();  // the rows failed above, if any
        return std::vector<job>{};
      }
      c.execute(set_lease(names, keys, c.quote(req.by), token, lease));
      tx.commit();
      return out;
    });
  }

  // One fenced batch write: one transaction that locks the rows still held by their lease
  // (plan_fence / settle_fence decide which), hands the verdict to `write`, and commits.
  // `res.lost` names the others exactly.
  template <class Result, class Item, class Write>
  Result fenced_batch(const std::vector<Item>& batch, bool live, Write write) {
    return with_connection([&](connection& c) {
      Result res;
      if (batch.empty()) return res;
      std::vector<lease_ref> refs;
      for (const auto& x : batch) refs.push_back(x.ref);
      const auto plan = plan_fence(refs, names.key, quote_with(c));
      transaction tx(c);
      std::unordered_set<std::string> locked;
      for (const auto& q : plan.queries)
        for (auto& r : c.select(held_rows(names, q.rows, c.quote(q.by), live))) locked.insert(r[0].value_or(""));
      auto fence = settle_fence(plan, refs, locked);
      write(c, fence, res);
      tx.commit();
      res.applied = fence.applied;
      res.lost = std::move(fence.lost);
      return res;
    });
  }

  // --on-done delete on MariaDB, one worker's batch (a shard's always is): the fence and the
  // delete are one autocommitted DELETE ... RETURNING, one round trip instead of four (START,
  // the locking read, DELETE, COMMIT). The rows it names are the ones whose live lease held.
  std::optional<write_result> delete_returning(const std::vector<completion>& batch) {
    std::vector<lease_ref> refs;
    for (const auto& x : batch) refs.push_back(x.ref);
    return with_connection([&](connection& c) -> std::optional<write_result> {
      const auto plan = plan_fence(refs, names.key, quote_with(c));
      const auto* q = single_fence(plan, false);
      if (!q) return std::nullopt;
      std::unordered_set<std::string> deleted;
      for (auto& r : c.select(delete_held_rows(names, q->rows, c.quote(q->by)))) deleted.insert(r[0].value_or(""));
      auto fence = settle_fence(plan, refs, deleted);
      write_result res;
      res.applied = fence.applied;
      res.lost = std::move(fence.lost);
      return res;
    });
  }

  // --on-done mark, a batch single_fence accepts (a shard's usually is), in one statement: the
  // fence is the UPDATE's own WHERE. When it changed every row, every lease held and the
  // transaction commits -- three round trips instead of four (no separate locking read); when
  // it changed fewer, it rolls back and the batch goes the locking way, which names the lost.
  std::optional<write_result> complete_in_one(const std::vector<completion>& storable) {
    if (storable.empty()) return std::nullopt;
    std::vector<lease_ref> refs;
    for (const auto& x : storable) refs.push_back(x.ref);
    return with_connection([&](connection& c) -> std::optional<write_result> {
      const auto plan = plan_fence(refs, names.key, quote_with(c));
      const auto* q = single_fence(plan, true);
      if (!q) return std::nullopt;
      std::vector<std::string> results;
      for (const auto& x : storable) results.push_back(c.quote(x.result_json));
      const auto sql = complete_held_rows(names, q->rows, c.quote(q->by), results);
      if (sql.size() > limits.max_statement_bytes / 2) return std::nullopt;  // as statement_runs bounds each UPDATE
      transaction tx(c);
      c.execute(sql);
      if (c.affected() != storable.size()) return std::nullopt;  // rolled back by tx
      tx.commit();
      write_result res;
      res.applied = storable.size();
      return res;
    });
  }

  write_result complete(const std::vector<completion>& batch) {
    if (opts.done == on_done::remove && limits.delete_returning && !batch.empty())
      if (auto res = delete_returning(batch)) return std::move(*res);
    // Answers the server can't hold are refused here, before any statement: the engine fails
    // them (fenced), and the rest goes out.
    auto split = split_storable(batch, opts.done != on_done::remove, limits);
    const auto& storable = split.storable;
    if (opts.done != on_done::remove) {
      if (auto res = complete_in_one(storable)) {
        res->refused = std::move(split.refused);
        return std::move(*res);
      }
    }
    auto res = fenced_batch<write_result>(storable, true, [&](connection& c, const fence_outcome& fence, write_result&) {
      std::vector<std::string> ids;
      std::vector<std::string> results;
      for (std::size_t i = 0; i < storable.size(); ++i) {
        if (!fence.held[i]) continue;
        ids.push_back(*fence.held[i]);
        if (opts.done != on_done::remove) results.push_back(c.quote(storable[i].result_json));
      }
      if (ids.empty()) return;
      if (opts.done == on_done::remove) {
        c.execute(delete_rows(names, ids));
        return;
      }
      // Statements stay under half of max_allowed_packet: several in one transaction if needed.
      std::vector<std::size_t> sizes;
      for (const auto& r : results) sizes.push_back(r.size());
      std::size_t at = 0;
      for (const auto n : statement_runs(sizes, limits.max_statement_bytes)) {
        const std::vector<std::string> run_ids(ids.begin() + at, ids.begin() + at + n);
        const std::vector<std::string> run_results(results.begin() + at, results.begin() + at + n);
        c.execute(complete_rows(names, run_ids, run_results));
        at += n;
      }
    });
    res.refused = std::move(split.refused);
    return res;
  }

  renew_result renew(const std::vector<renewal>& batch, millis lease) {
    return fenced_batch<renew_result>(batch, false, [&](connection& c, const fence_outcome& fence, renew_result& res) {
      std::vector<std::string> ids;
      for (const auto& row : fence.held)
        if (row) ids.push_back(*row);
      if (!ids.empty()) c.execute(renew_rows(names, ids, micros(lease)));
      res.until.assign(ids.size(), store_clock::now() + lease);  // approximate: the engine keeps its own schedule
    });
  }

  write_result release(const std::vector<release_item>& batch) {
    return fenced_batch<write_result>(batch, false, [&](connection& c, const fence_outcome& fence, write_result&) {
      for (auto& [key, ids] : release_groups(batch, fence))
        c.execute(release_rows(names, ids, key.first, c.quote(key.second)));
    });
  }

  write_result fail(const std::vector<failure>& batch) {
    return fenced_batch<write_result>(batch, false, [&](connection& c, const fence_outcome& fence, write_result&) {
      for (std::size_t i = 0; i < batch.size(); ++i)
        if (const auto row = fence.held[i]) c.execute(fail_row(names, *row, c.quote(batch[i].reason), batch[i].http_status));
    });
  }

  store_stats stats() {
    return with_connection([&](connection& c) {
      auto rows = c.select(sql::stats(names));
      store_stats s;
      if (!rows.empty()) {
        s.done = to_u64(rows[0][0]);
        s.failed = to_u64(rows[0][1]);
        s.pending = to_u64(rows[0][2]);
        s.leased_live = to_u64(rows[0][3]);
        s.leased_expired = to_u64(rows[0][4]);
      }
      return s;
    });
  }

  std::size_t seed(std::size_t n, std::uint64_t seed_value, std::size_t distinct) {
    ipv4_draw draw(n, distinct, seed_value);
    std::size_t inserted = 0;
    while (inserted < n) {
      const std::size_t k = std::min<std::size_t>(1000, n - inserted);
      std::vector<std::string> ips;
      for (std::size_t i = 0; i < k; ++i) ips.push_back("'" + ipv4_to_string(draw.next()) + "'");
      inserted += with_connection([&](connection& c) {
        c.execute(insert_sources(names, ips));
        return static_cast<std::size_t>(c.affected());
      });
    }
    return inserted;
  }
};

mysql_store::mysql_store(mysql_options opts)
    : blocking_store(opts.threads), impl_(std::make_unique<impl>(std::move(opts), *this)) {
  // Connects now, so a dead server is reported at start.
  impl_->limits = impl_->with_connection([&](connection& c) {
    auto rows = c.select("SELECT VERSION(), @@max_allowed_packet, CURRENT_USER()");
    if (rows.empty() || rows[0].size() < 3) return server_limits{};
    impl_->current_user = rows[0][2].value_or(impl_->current_user);
    return limits_for(rows[0][0].value_or(""), to_u64(rows[0][1]));
  });
  impl_->prepare_table();
}

mysql_store::~mysql_store() { join_pool(); }  // no call may outlive the connections

void mysql_store::check_write_rights() { impl_->check_write_rights(); }
std::size_t mysql_store::max_statement_bytes() const { return impl_->limits.max_statement_bytes; }

std::string mysql_store::describe() const {
  return impl_->shown + " table " + impl_->names.table + " (claim skip-locked, on done " +
         (impl_->opts.done == on_done::remove ? "delete" : "mark") + ")";
}

std::size_t mysql_store::seed(std::size_t n, std::uint64_t s) { return impl_->seed(n, s, 0); }
std::size_t mysql_store::seed_skewed(std::size_t n, std::uint64_t s, std::size_t distinct) {
  return impl_->seed(n, s, distinct);
}

std::optional<pending_sample> mysql_store::sample_pending() {
  return impl_->with_connection([&](connection& c) -> std::optional<pending_sample> {
    const auto& n = impl_->names;
    std::vector<std::string> columns;
    for (auto& r : c.select(table_columns(n))) columns.push_back(r[0].value_or(""));
    const bool has_source = has_column(columns, n.source);
    auto rows = c.select(sample_open_row(n, has_source, true));
    if (rows.empty() && has_source) rows = c.select(sample_open_row(n, true, false));
    if (rows.empty()) return std::nullopt;
    return sampled_row(rows[0], n.source, has_source, std::move(columns));
  });
}
store_stats mysql_store::stats_blocking() { return impl_->stats(); }
std::vector<job> mysql_store::claim_blocking(const claim_request& r) { return impl_->claim(r); }
write_result mysql_store::complete_blocking(const std::vector<completion>& b) { return impl_->complete(b); }
renew_result mysql_store::renew_blocking(const std::vector<renewal>& b, millis lease) { return impl_->renew(b, lease); }
write_result mysql_store::release_blocking(const std::vector<release_item>& b) { return impl_->release(b); }
write_result mysql_store::fail_blocking(const std::vector<failure>& b) { return impl_->fail(b); }

std::uint64_t mysql_store::retry_failed(const retry_filter& which) {
  return impl_->with_connection([&](connection& c) {
    failed_rows rows;
    if (!which.reason_contains.empty()) rows.reason_quoted = c.quote(which.reason_contains);
    if (which.reason_is) rows.reason_is_quoted = c.quote(*which.reason_is);  // '' quoted is not empty
    if (which.since)
      rows.since_epoch_us = std::chrono::duration_cast<std::chrono::microseconds>(which.since->time_since_epoch()).count();
    if (which.since_ago) rows.since_ago_us = std::chrono::duration_cast<std::chrono::microseconds>(*which.since_ago).count();
    c.execute(retry_failed_rows(impl_->names, rows));
    return static_cast<std::uint64_t>(c.affected());
  });
}

std::vector<failure_reason> mysql_store::failure_reasons(std::size_t top) {
  return impl_->with_connection([&](connection& c) {
    std::vector<failure_reason> out;
    for (const auto& r : c.select(sql::failure_reasons(impl_->names, top))) {
      failure_reason f;
      f.reason = r[0].value_or("");
      f.count = to_u64(r[1]);
      f.example_ids.push_back(r[2].value_or(""));
      if (r[3] != r[2]) f.example_ids.push_back(r[3].value_or(""));
      out.push_back(std::move(f));
    }
    return out;
  });
}

// The done rows whose answer is the API's "no data" (admin_store::no_data_count). A target
// column that holds something else than JSON makes the server refuse the question: not counted.
std::optional<std::uint64_t> mysql_store::no_data_count() {
  const auto& n = impl_->names;
  try {
    return impl_->with_connection([&](connection& c) {
      const auto rows = c.select("SELECT COUNT(*) FROM `" + n.table + "` WHERE JSON_UNQUOTE(JSON_EXTRACT(`" + n.target +
                                 "`, '$.status')) = 'fail'");
      return rows.empty() ? std::uint64_t{0} : to_u64(rows[0][0]);
    });
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<lease_holder> mysql_store::lease_holders() {
  return impl_->with_connection([&](connection& c) {
    std::vector<lease_holder> out;
    for (const auto& r : c.select(sql::lease_holders(impl_->names))) {
      lease_holder h;
      h.by = r[0].value_or("");
      h.leased = to_u64(r[1]);
      h.expired = to_u64(r[2]);
      h.earliest_until_s = static_cast<double>(server_number<std::int64_t>(r[3], "MySQL/MariaDB")) / 1e6;
      h.latest_until_s = static_cast<double>(server_number<std::int64_t>(r[4], "MySQL/MariaDB")) / 1e6;
      out.push_back(std::move(h));
    }
    return out;
  });
}

std::uint64_t mysql_store::release_worker(const std::string& name) {
  require_worker_id(name);
  return impl_->with_connection([&](connection& c) {
    c.execute(sql::release_worker(impl_->names, c.quote(name), c.quote(name + "-"), name.size() + 1));
    return static_cast<std::uint64_t>(c.affected());
  });
}

void mysql_store::reset_table() {
  impl_->with_connection([&](connection& c) {
    c.execute("DROP TABLE IF EXISTS `" + impl_->names.table + "`");
    c.execute(create_table(impl_->names));
    return 0;
  });
}

void mysql_store::in_session(const std::function<void(sql_session&)>& body) {
  impl_->with_connection([&](connection& c) {
    body(c);
    return 0;
  });
}

void mysql_store::execute(const std::string& statement) {
  impl_->with_connection([&](connection& c) {
    c.execute(statement);
    return 0;
  });
}

std::optional<std::string> mysql_store::query_value(const std::string& select) {
  return impl_->with_connection([&](connection& c) -> std::optional<std::string> {
    auto rows = c.select(select);
    if (rows.empty() || rows[0].empty()) return std::nullopt;
    return rows[0][0];
  });
}

}  // namespace dibs::sql
