// The MongoDB store: mongo-c-driver through a mongoc_client_pool_t, every driver call on the
// offload thread pool (never on a shard thread), with the claim strategies of DESIGN.md:
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
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/names.hpp>

#include <dibs/blocking_store.hpp>

#include <atomic>
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
};

class mongo_store final : public blocking_store {
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
  // Inserts `n` documents {<source>: <random public IPv4>, <target>: null}; returns how many.
  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  // Drops the collection and its lock collection (tests).
  void drop();
  // A document by its id text, as canonical extended JSON ("" when absent).
  std::string document_json(const std::string& id);
  // The target field of a document as relaxed JSON, nullopt when null or absent.
  std::optional<std::string> target_json(const std::string& id);
  // Every document of the collection (tests, small collections only).
  std::vector<bson_ptr> documents();
  // Runs an admin command and returns its reply as canonical extended JSON (tests, bench).
  std::string run_command(const std::string& json_command);

  // Calls `on_change` (from a background thread) whenever the collection gets an insert, update
  // or replace, through a change stream. Returns false, and logs why, when the server has no
  // change streams (standalone servers, the test stand-in): callers then rely on polling.
  bool watch(std::function<void()> on_change) override;
  void stop_watching() override;

  store_time server_now() const;
  // How far the server's clock is ahead of this machine's wall clock (logs, tests).
  std::chrono::milliseconds clock_offset() const;
  std::uint64_t claim_conflicts() const override { return conflicts_.load(); }
  claim_strategy strategy() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<std::uint64_t> conflicts_{0};
};

}  // namespace dibs::mongo
