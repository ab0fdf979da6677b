// The MongoDB store: mongo-c-driver through a client pool, every driver call on the offload
// thread pool (never on a shard thread), with one of four claim strategies:
//
//   update-find       update_one claim with a fresh token, then find by token (2 round trips/item)
//   find-and-modify   one findAndModify returning the claimed document (1 round trip/item)
//   batch             candidate ids from a random start -> updateMany over them with one token ->
//                     find by token (3 round trips per batch)
//   lock-collection   the document is untouched while locked: locks are documents
//                     {_id: <doc id>, ts, by, token, until, attempts} in <collection>.lock; the
//                     unique _id decides the winner (weaker fencing: see the README)
//
// Completions, renewals, releases and failures go out as unordered bulk writes: one round trip
// per batch. Times come from the server's clock (server_clock.hpp: its localTime from `hello` plus
// the steady time since, re-measured every clock_refresh).
//
// This file is the wiring; the parts live beside it: claimer.hpp (a file per strategy),
// lease_keeper.hpp (the lease in the document, or in the lock collection), lease_verdicts.hpp and
// lock_claim_decisions.hpp (the decisions, without a server), driver_handles.hpp, connection.hpp,
// clock_sync.hpp, id_sampler.hpp, change_watcher.hpp, store_admin.hpp. Tests reach the collection
// through test_hooks.hpp. This header needs no driver header.
#pragma once

#include <dibs/stores/mongo_names.hpp>

#include <dibs/recorded_settings.hpp>
#include <dibs/stores/own_records.hpp>
#include <dibs/stores/store_console.hpp>

#include <dibs/blocking_store.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace dibs::mongo {

enum class claim_strategy { update_find, find_and_modify, batch, lock_collection };
std::optional<claim_strategy> parse_strategy(const std::string& text);
std::string to_string(claim_strategy s);
struct store_context;

struct mongo_options {
  std::string uri;  // any standard connection string; options go to the driver unchanged
  std::string db = "test";
  std::string collection = "message";
  field_names names;
  claim_strategy strategy = claim_strategy::batch;
  std::size_t threads = 4;       // offload pool threads, one pooled client each
  std::string lock_collection;   // "" = <collection>.lock
  std::chrono::seconds clock_refresh{30};
  bool create_indexes = true;
  // A look-only open (`dibs status`, `dibs retry`): when the lock collection holds locks, count
  // leases there whatever `strategy` says (the user need not repeat claim lock-collection).
  bool detect_lock_collection = false;
  // false: a missing collection is refused (dibs::missing_table_error, with the collections there)
  // rather than created by the first write (dibs enrich and dibs status create nothing).
  bool create_collection = true;
  // Count the commands sent (statements_sent(): dibs bench), through the driver's command
  // monitoring; off by default: a monitored bulk write is copied whole for the monitor.
  bool count_commands = false;
  // dibs init's record (dibs/recorded_settings.hpp, settings_record.hpp): read and applied to
  // `names` at start, or written (dibs init).
  settings_use settings;
  std::string map;  // map's text (dibs/field_mapping.hpp), recorded by dibs init; names.mapped when none
  // Refuse a collection where no document has the target field (dibs::missing_table_error, kind
  // "field"): a misspelled target would otherwise make every document pending again. Not when
  // the user said the field is new (target_is_new) or dibs init recorded it.
  bool require_target = false;
  bool target_is_new = false;
};

class mongo_store final : public blocking_store,
                          public own_records,
                          public counted_statements,
                          public std::enable_shared_from_this<mongo_store> {
 public:
  // Connects (server selection), measures the clock offset, creates the claim indexes.
  // Throws std::invalid_argument for a bad URI or option, mongo_error when the server can't be
  // reached or refuses; messages never contain the password.
  explicit mongo_store(mongo_options opts);
  ~mongo_store() override;

  std::string describe() const override;

  // Blocking forms, for the CLI's seed/status and for tests (not for shard threads).
  std::vector<job> claim_blocking(const claim_request& req) override;
  write_result complete_blocking(const std::vector<completion>& batch) override;
  renew_result renew_blocking(const std::vector<renewal>& batch, millis lease) override;
  write_result release_blocking(const std::vector<release_item>& batch) override;
  write_result fail_blocking(const std::vector<failure>& batch) override;
  store_stats stats_blocking() override;
  store_stats open_stats_blocking() override;
  bool counts_open() const override { return true; }
  std::uint64_t open_count_blocking() override;
  std::uint64_t retry_failed(const retry_filter& which) override;
  std::vector<failure_reason> failure_reasons(std::size_t top) override;
  void list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) override;
  std::optional<std::uint64_t> no_data_count() override;
  std::vector<lease_holder> lease_holders() override;
  std::uint64_t release_worker(const std::string& name) override;
  // Inserts `n` documents {<source>: <random public IPv4>, <target>: null}; returns how many.
  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  std::size_t seed_skewed(std::size_t n, std::uint64_t seed, std::size_t distinct) override;
  std::vector<pending_sample> sample_pending_items(std::size_t n) override;
  std::optional<pending_sample> sample_done() override;

  // Calls `on_change` (from a background thread) whenever the collection gets an insert, update
  // or replace, through a change stream. Returns false, and logs why, when the server has no
  // change streams (standalone servers, the test stand-in): callers then rely on polling.
  bool watch(std::function<void()> on_change) override;
  void stop_watching() override;

  store_time server_now() const;
  // How far the server's clock is ahead of this machine's wall clock (logs, tests).
  std::chrono::milliseconds clock_offset() const;
  std::uint64_t claim_conflicts() const override;
  // counted_statements: commands sent since the store opened (dibs bench); nullopt unless
  // opened with count_commands.
  std::optional<std::uint64_t> statements_sent() const override;
  claim_strategy strategy() const;
  // own_records: dibs's tables (collections) beside the user's (mysql_records.cpp, pg_records.cpp, mongo_records.cpp).
  std::shared_ptr<record_table> open_records(const record_kind& kind, bool create = true) override;

 private:
  void start();  // the constructor's round trips: the clock, the collection, the indexes
  void follow_lock_collection();  // the lock collection holds leases: claim (or read) there
  friend struct test_access;  // test_hooks.cpp
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace dibs::mongo
