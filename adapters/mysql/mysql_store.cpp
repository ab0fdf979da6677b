#include "mysql_store.hpp"

#include "mysql_tls.hpp"

#include <dibs/close_on_exec.hpp>
#include <dibs/ipv4_ranges.hpp>
#include <dibs/log.hpp>
#include <dibs/uri_redact.hpp>

#include <mysql.h>
#include <unistd.h>
#include <errmsg.h>

#include <map>
#include <mutex>
#include <random>
#include <unordered_set>

namespace dibs::sql {

bool sql_error::connection_lost() const {
  return code == CR_SERVER_GONE_ERROR || code == CR_SERVER_LOST || code == CR_CONNECTION_ERROR ||
         code == CR_CONN_HOST_ERROR || code == 1927 /* ER_CONNECTION_KILLED */ || code == 1053 /* server shutdown */;
}

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

// "2026-11-22 03:04:05.123456" (UTC) -> time point.
store_time parse_datetime(const char* s) {
  if (!s) return {};
  std::tm tm{};
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0, frac = 0;
  char fracbuf[8] = {};
  if (std::sscanf(s, "%d-%d-%d %d:%d:%d.%6s", &year, &mon, &day, &hour, &min, &sec, fracbuf) < 6) return {};
  std::string f(fracbuf);
  while (f.size() < 6) f += '0';
  frac = std::atoi(f.c_str());
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  const auto t = ::timegm(&tm);
  return store_clock::from_time_t(t) + std::chrono::microseconds(frac);
}

using row = std::vector<std::optional<std::string>>;

class connection {
 public:
  connection(const mysql_uri& u, const mysql_options& o) {
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
    const std::string where = "cannot connect to MySQL/MariaDB at " + u.host + ":" + std::to_string(u.port);
    if (!mysql_real_connect(db(), u.host.c_str(), u.user.c_str(), u.password.c_str(), u.database.c_str(), u.port,
                            u.socket.empty() ? nullptr : u.socket.c_str(), 0)) {
      const auto code = mysql_errno(db());
      throw sql_error(where + ": " + mysql_error(db()) +
                          (code == CR_SSL_CONNECTION_ERROR ? " (TLS with " + describe_tls(u) + ")" : std::string()),
                      code);
    }
    if (const auto why = tls_shortfall(db(), u); !why.empty()) throw sql_error(where + ": " + why, CR_SSL_CONNECTION_ERROR);
    // The client library opens its socket without SOCK_CLOEXEC: mark it now (see close_on_exec.hpp).
    close_on_exec(static_cast<int>(mysql_get_socket(db())));
    // DATETIME values are UTC. @dibs_client_pid names this process to the server, so an audit
    // trigger (the chaos checker's) can tell which process made each write; it costs nothing more.
    execute("SET SESSION time_zone = '+00:00', @dibs_client_pid = " + std::to_string(::getpid()));
    if (o.idle_transaction_timeout.count() > 0) {
      try {
        execute("SET SESSION idle_transaction_timeout = " + std::to_string(o.idle_transaction_timeout.count()));
      } catch (const sql_error& e) {
        if (e.code != 1193) throw;  // ER_UNKNOWN_SYSTEM_VARIABLE: MySQL, not MariaDB
      }
    }
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  void execute(const std::string& sql) {
    if (mysql_real_query(db(), sql.data(), sql.size()) != 0) fail(sql);
    // Statements that return rows must be drained even when the caller wants none.
    if (MYSQL_RES* r = mysql_store_result(db())) mysql_free_result(r);
  }

  std::vector<row> select(const std::string& sql) {
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

  std::string quote(const std::string& v) {
    std::string out(v.size() * 2 + 3, '\0');
    out[0] = '\'';
    const auto n = mysql_real_escape_string(db(), out.data() + 1, v.data(), v.size());
    out.resize(n + 1);
    out += '\'';
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& sql) {
    std::string shown = sql.substr(0, 160);
    if (sql.size() > 160) shown += "...";
    throw sql_error(std::string(mysql_error(db())) + " (in: " + shown + ")", mysql_errno(db()), mysql_error(db()));
  }
  MYSQL* db() const { return db_.get(); }
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

std::uint64_t to_u64(const std::optional<std::string>& s) { return s ? std::stoull(*s) : 0; }

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
    return std::make_unique<connection>(uri, opts);
  }
  void give_back(std::unique_ptr<connection> c) {
    std::lock_guard lock(pool_mutex);
    idle.push_back(std::move(c));
  }

  // Runs `f(connection&)`; a dropped connection is replaced and `f` tried once more (every
  // operation here is a single transaction, rolled back by the server when the link dies; a
  // COMMIT whose answer was lost shows up on the retry as leases no longer held).
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
        if (refuses_content(e.code)) {
          // The statement was refused for a value it carries (the transaction rolled back, the
          // link is fine): the same batch would be refused again. The engine splits it.
          give_back(std::move(c));
          throw store_refused(e.server_message + " (error " + std::to_string(e.code) + ")");
        }
        if (!e.connection_lost()) throw;
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

  void create_table() {
    with_connection([&](connection& c) {
      c.execute(sql::create_table(names));
      return 0;
    });
  }

  std::vector<job> claim(const claim_request& req) {
    return with_connection([&](connection& c) {
      for (int round = 0; round < 3; ++round) {
        const auto grace = micros(req.grace);
        const int from = static_cast<int>(rng()() % 256);
        auto cands = c.select(candidates(names, grace, from, true, req.max));
        if (cands.size() < req.max) {
          auto more = c.select(candidates(names, grace, from, false, req.max - cands.size()));
          cands.insert(cands.end(), more.begin(), more.end());
        }
        if (cands.empty()) return std::vector<job>{};
        std::vector<std::uint64_t> ids;
        for (auto& r : cands) ids.push_back(to_u64(r[0]));

        transaction tx(c);
        auto locked = c.select(lock_candidates(names, ids, grace, micros(req.lease)));
        self.conflicts_ += ids.size() - locked.size();
        if (locked.empty()) continue;  // all taken by others first: look again
        std::vector<std::uint64_t> mine;
        for (auto& r : locked) mine.push_back(to_u64(r[0]));
        const auto token = fresh_token();
        c.execute(set_lease(names, mine, c.quote(req.by), token, micros(req.lease)));
        tx.commit();

        std::vector<job> out;
        for (auto& r : locked) {
          job j;
          j.id = *r[0];
          j.by = req.by;
          j.token = token;
          j.attempts = static_cast<int>(to_u64(r[2]));
          j.until = parse_datetime(r[3] ? r[3]->c_str() : nullptr);
          job_field f;
          f.name = names.source;
          if (r[1]) {
            f.st = job_field::state::string;
            f.value = *r[1];
          } else {
            f.st = job_field::state::missing;
          }
          j.fields.push_back(std::move(f));
          out.push_back(std::move(j));
        }
        return out;
      }
      return std::vector<job>{};
    });
  }

  // The rows of `refs` still held (and live when `live`), locked inside the open transaction.
  std::unordered_set<std::uint64_t> held(connection& c, const std::vector<lease_ref>& refs, bool live,
                                         std::vector<std::string>& lost) {
    std::vector<row_ref> rows;
    std::string by;
    for (const auto& r : refs) {
      try {
        rows.push_back(row_ref{std::stoull(r.id), r.token});
      } catch (const std::exception&) {
        lost.push_back(r.id);
      }
      by = r.by;
    }
    std::unordered_set<std::uint64_t> out;
    if (rows.empty()) return out;
    // Group by worker: a batch normally comes from one worker (one `by`).
    std::map<std::string, std::vector<row_ref>> by_worker;
    for (std::size_t i = 0, k = 0; i < refs.size(); ++i) {
      if (k < rows.size() && std::to_string(rows[k].id) == refs[i].id) by_worker[refs[i].by].push_back(rows[k++]);
    }
    for (auto& [worker, group] : by_worker)
      for (auto& r : c.select(held_rows(names, group, c.quote(worker), live))) out.insert(to_u64(r[0]));
    for (const auto& r : rows)
      if (!out.count(r.id)) lost.push_back(std::to_string(r.id));
    return out;
  }

  // The shape of every fenced batch write: one transaction that locks the rows still held by
  // their lease, hands them to `write`, and commits. `res.lost` names the others exactly.
  template <class Result, class Item, class Write>
  Result fenced_batch(const std::vector<Item>& batch, bool live, Write write) {
    return with_connection([&](connection& c) {
      Result res;
      if (batch.empty()) return res;
      std::vector<lease_ref> refs;
      for (const auto& x : batch) refs.push_back(x.ref);
      transaction tx(c);
      const auto valid = held(c, refs, live, res.lost);
      write(c, valid, res);
      tx.commit();
      res.applied = valid.size();
      return res;
    });
  }

  static std::uint64_t row_id(const lease_ref& r) { return std::strtoull(r.id.c_str(), nullptr, 10); }

  write_result complete(const std::vector<completion>& batch) {
    // Answers the server can't hold are refused here, before any statement: the engine fails
    // them (fenced), and the rest goes out. Deleted rows keep no answer: nothing to check.
    std::vector<completion> storable;
    std::vector<std::pair<std::string, std::string>> refused;
    for (const auto& x : batch) {
      auto why = opts.done == on_done::remove ? std::nullopt
                                              : unstorable_answer(x.result_json, 2 * x.result_json.size() + 2, limits);
      if (why) refused.emplace_back(x.ref.id, std::move(*why));
      else storable.push_back(x);
    }
    auto res = fenced_batch<write_result>(storable, true, [&](connection& c, const auto& valid, write_result&) {
      if (opts.done == on_done::remove) {
        std::vector<std::uint64_t> ids;
        for (const auto& x : storable)
          if (valid.count(row_id(x.ref))) ids.push_back(row_id(x.ref));
        if (!ids.empty()) c.execute(delete_rows(names, ids));
        return;
      }
      // Statements stay under half of max_allowed_packet: several in one transaction if needed.
      std::vector<std::uint64_t> ids;
      std::vector<std::string> results;
      std::size_t bytes = 0;
      auto send = [&] {
        if (!ids.empty()) c.execute(complete_rows(names, ids, results));
        ids.clear();
        results.clear();
        bytes = 0;
      };
      for (const auto& x : storable) {
        if (!valid.count(row_id(x.ref))) continue;
        auto quoted = c.quote(x.result_json);
        if (!ids.empty() && bytes + quoted.size() > limits.max_statement_bytes / 2) send();
        bytes += quoted.size() + 32;
        ids.push_back(row_id(x.ref));
        results.push_back(std::move(quoted));
      }
      send();
    });
    res.refused = std::move(refused);
    return res;
  }

  renew_result renew(const std::vector<renewal>& batch, millis lease) {
    return fenced_batch<renew_result>(batch, false, [&](connection& c, const auto& valid, renew_result& res) {
      std::vector<std::uint64_t> ids(valid.begin(), valid.end());
      if (!ids.empty()) c.execute(renew_rows(names, ids, micros(lease)));
      res.until.assign(ids.size(), store_clock::now() + lease);  // approximate: the engine keeps its own schedule
    });
  }

  write_result release(const std::vector<release_item>& batch) {
    return fenced_batch<write_result>(batch, false, [&](connection& c, const auto& valid, write_result&) {
      // One statement per distinct (delay, reason): shutdown releases share one.
      std::map<std::pair<std::int64_t, std::string>, std::vector<std::uint64_t>> groups;
      for (const auto& x : batch)
        if (valid.count(row_id(x.ref))) groups[{micros(x.delay), x.why}].push_back(row_id(x.ref));
      for (auto& [key, ids] : groups) c.execute(release_rows(names, ids, key.first, c.quote(key.second)));
    });
  }

  write_result fail(const std::vector<failure>& batch) {
    return fenced_batch<write_result>(batch, false, [&](connection& c, const auto& valid, write_result&) {
      for (const auto& x : batch)
        if (valid.count(row_id(x.ref))) c.execute(fail_row(names, row_id(x.ref), c.quote(x.reason), x.http_status));
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

  std::size_t seed(std::size_t n, std::uint64_t seed_value) {
    std::mt19937_64 r(seed_value);
    std::size_t inserted = 0;
    while (inserted < n) {
      const std::size_t k = std::min<std::size_t>(1000, n - inserted);
      std::vector<std::string> ips;
      for (std::size_t i = 0; i < k; ++i) ips.push_back("'" + ipv4_to_string(random_public_ipv4(r)) + "'");
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
  impl_->limits = impl_->with_connection([](connection& c) {
    auto rows = c.select("SELECT VERSION(), @@max_allowed_packet");
    if (rows.empty()) return server_limits{};
    return limits_for(rows[0][0].value_or(""), std::stoull(rows[0][1].value_or("0")));
  });
  if (impl_->opts.create_table) impl_->create_table();
  else impl_->stats();  // the table must be there
}

mysql_store::~mysql_store() { join_pool(); }  // no call may outlive the connections

std::string mysql_store::describe() const {
  return impl_->shown + " table " + impl_->names.table + " (claim skip-locked, on done " +
         (impl_->opts.done == on_done::remove ? "delete" : "mark") + ")";
}

std::size_t mysql_store::seed(std::size_t n, std::uint64_t s) { return impl_->seed(n, s); }
store_stats mysql_store::stats_blocking() { return impl_->stats(); }
std::vector<job> mysql_store::claim_blocking(const claim_request& r) { return impl_->claim(r); }
write_result mysql_store::complete_blocking(const std::vector<completion>& b) { return impl_->complete(b); }
renew_result mysql_store::renew_blocking(const std::vector<renewal>& b, millis lease) { return impl_->renew(b, lease); }
write_result mysql_store::release_blocking(const std::vector<release_item>& b) { return impl_->release(b); }
write_result mysql_store::fail_blocking(const std::vector<failure>& b) { return impl_->fail(b); }

void mysql_store::reset_table() {
  impl_->with_connection([&](connection& c) {
    c.execute("DROP TABLE IF EXISTS `" + impl_->names.table + "`");
    c.execute(create_table(impl_->names));
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
