// mysql_store's inside, shared by the files that implement it: the table's names, the server's
// limits, the connection pool and its reconnect policy (with_connection). mysql_store.cpp opens
// the store and its table; mysql_claim.cpp claims; mysql_fenced_writes.cpp writes the outcomes;
// mysql_store_admin.cpp answers the operator's questions.
#pragma once

#include <adapters/mysql/mysql_connection.hpp>
#include <adapters/mysql/mysql_endpoint.hpp>
#include <adapters/mysql/mysql_hosts.hpp>
#include <dibs/stores/mysql_store.hpp>
#include <adapters/mysql/mysql_uri.hpp>
#include <adapters/mysql/rights_probe.hpp>
#include <adapters/mysql/server_errors.hpp>
#include <adapters/mysql/server_limits.hpp>
#include <adapters/mysql/mysql_protocol.hpp>

#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>
#include "engine/src/rights_refusal.hpp"
#include "engine/src/uri_redact.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace dibs::mysql {

// A lease or grace as the microseconds the statements' DATE_ADD(... MICROSECOND) take.
inline std::int64_t micros(std::chrono::milliseconds d) { return d.count() * 1000; }

// The server's name in the errors of a cell that is no number.
inline constexpr const char* server = "MySQL/MariaDB";

struct mysql_store::impl {
  impl(mysql_options o, mysql_store& s)
      : opts(std::move(o)), self(s), uri(parse_mysql_uri(opts.uri)) {
    names.table = uri.table;
    names.source = opts.source;
    names.target = opts.target;
    names.mapped = opts.mapped_columns;
    names.more = opts.more_columns;
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
  std::vector<std::unique_ptr<mysql_connection>> idle;

  std::atomic<std::size_t> current_host{0};  // of uri.hosts: where new connections go first
  std::atomic<std::size_t> connected_host{0};  // the host of the last connection made
  std::atomic<std::uint64_t> claim_conflicts{0};

  // A new connection: to the current host, else to the next of the URI's hosts that answers
  // (mysql_hosts.hpp); each tried once. The error of the last one tried when none answers.
  std::unique_ptr<mysql_connection> connect() {
    const auto from = current_host.load();
    std::optional<sql_error> last;
    for (const auto i : connect_order(uri.hosts.size(), from)) {
      try {
        auto c = std::make_unique<mysql_connection>(at_host(uri, i), opts, self.statements_);
        c->host_index = i;
        current_host = i;
        if (connected_host.exchange(i) != i)
          log::warn("mysql: now connected to ", endpoint_text(at_host(uri, i), nullptr), " (host ", i + 1, " of ",
                    uri.hosts.size(), " in ", setting_name("store"), ")");
        return c;
      } catch (const sql_error& e) {
        if (uri.hosts.size() == 1 || !another_host_may_answer(e.code, e.server_message)) throw;
        log::warn("mysql: ", e.what(), "; trying the next host");
        last = e;
      }
    }
    throw *last;
  }
  std::unique_ptr<mysql_connection> acquire() {
    {
      std::lock_guard lock(pool_mutex);
      if (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        return c;
      }
    }
    return connect();
  }
  void give_back(std::unique_ptr<mysql_connection> c) {
    std::lock_guard lock(pool_mutex);
    idle.push_back(std::move(c));
  }
  // The server of `c` is gone (or out of its cluster's primary component): the other idle
  // connections most likely went with it, and new ones go to the next host of the URI.
  void lost_server_of(const mysql_connection& c) {
    std::lock_guard lock(pool_mutex);
    idle.clear();
    auto at = c.host_index;
    // Only the first to see this host go moves on: another thread may have moved already.
    current_host.compare_exchange_strong(at, after_loss(uri.hosts.size(), c.host_index));
  }

  // Runs `f(connection&)`; a dropped connection is replaced and `f` tried once more (every
  // operation here is a single transaction, rolled back by the server when the link dies; a
  // COMMIT whose answer was lost -- or delete_returning's autocommitted statement's -- shows up
  // on the retry as leases no longer held: reported lost though written, never written twice).
  // With several hosts the new connection goes to the next one that answers. A transaction the
  // server rolled back for a deadlock (or, on Galera, a failed certification) is run again up to
  // `reruns` times, then its error thrown.
  template <class F>
  auto with_connection(F f, int reruns = 5) {
    int attempt_lost = 0;
    for (int attempt = 0;; ++attempt) {
      auto c = acquire();
      try {
        auto result = f(*c);
        give_back(std::move(c));
        return result;
      } catch (const sql_error& e) {
        if (e.retry_transaction()) {
          give_back(std::move(c));  // rolled back; the connection is fine
          if (attempt < reruns) continue;
          throw;
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
        if (!another_host_may_answer(e.code, e.server_message)) throw;
        lost_server_of(*c);
        if (attempt > 0 && attempt_lost++ > 0) throw;
        log::warn("mysql: connection lost (", e.what(), "); reconnecting");
      }
    }
  }

  void prepare_table();
  std::string hint() const;
  std::string grant() const;
  void check_write_rights();
  std::vector<job> claim(const claim_request& req);
  std::vector<job> claim_once(mysql_connection& c, const claim_request& req);
  template <class Result, class Item, class Write>
  Result fenced_batch(const std::vector<Item>& batch, bool live, Write write);
  std::optional<write_result> delete_returning(const std::vector<completion>& batch);
  std::optional<write_result> complete_in_one(const std::vector<completion>& storable);
  write_result complete(const std::vector<completion>& batch);
  renew_result renew(const std::vector<renewal>& batch, millis lease);
  write_result release(const std::vector<release_item>& batch);
  write_result fail(const std::vector<failure>& batch);
  store_stats stats();
  std::size_t seed(std::size_t n, std::uint64_t seed_value, std::size_t distinct);
};

}  // namespace dibs::mysql
