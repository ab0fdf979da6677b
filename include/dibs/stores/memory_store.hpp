// The embedded default store: items in memory, the full claim protocol (random tokens, `until`
// by the store's clock, grace, attempts, failed state), safe to call from every shard.
//
// Pending items wait in a FIFO; leased items sit in an ordered set by expiry, so a claim takes
// pending items first, then retries given back whose time is due (no grace: their holder let
// them go), then leases expired beyond the grace, each in O(log n).
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/admin_store.hpp>
#include <dibs/store.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

struct memory_store_options {
  std::string source_field = dibs::ipapi::source_field;
  std::string target_field = dibs::ipapi::target_field;
  std::string lock_field = "lock";
  // false: a completed item keeps no copy of its result (a store that persists results itself,
  // like the JSON Lines store, needs none in memory).
  bool keep_results = true;
  // The store's clock; tests pass a manual one to expire leases without sleeping.
  std::function<store_time()> now = [] { return store_clock::now(); };
};

class memory_store final : public store {
 public:
  using options = memory_store_options;


  struct lease_state {
    std::string by;
    std::uint64_t token = 0;
    store_time until{};
    // Given back by its holder for a retry at `until`: claimable then, without the grace that
    // guards a holder still at work (it is in retrying_, not leased_).
    bool retrying = false;
  };
  struct failure_state {
    std::string reason;
    int http_status = 0;
    store_time at{};
  };
  // What the store keeps of one item.
  struct item_state {
    job_field source;
    std::optional<std::string> target_json;
    std::optional<lease_state> lease;
    std::optional<failure_state> failed;
    std::string last_error;
    int attempts = 0;
    int writes = 0;  // how many times the target was written: the protocol says at most once
    // How many completions named this item, counted at the store's door before its fence: what
    // the engine sent, so that tests of the engine do not merely re-test the store's fence.
    int write_attempts = 0;
    // More fields the processor reads (a request's headers and body), beside the source.
    std::vector<job_field> more;
  };
  // A copy of one item, for inspection.
  struct item : item_state {
    std::string id;
  };

  memory_store() : memory_store(options{}) {}
  explicit memory_store(options opts);

  // Adds one item whose source field is `source` (its name is taken from the options).
  std::string add(job_field source);
  // ... with more fields (named as they are), handed to the processor beside the source.
  std::string add(job_field source, std::vector<job_field> more);
  std::string add(std::string source_value);
  // Adds `n` items whose source is a random public IPv4 address; `seed` makes them repeatable.
  // `distinct` > 0: drawn from that many addresses, the popular ones far more often (the same
  // address sending many messages: profiles/ipapi/skewed_draw.hpp).
  void seed_random_ips(std::size_t n, std::uint64_t seed, std::size_t distinct = 0);

  std::size_t size() const;
  std::optional<item> get(const std::string& id) const;
  std::vector<item> snapshot() const;
  // The item as a JSON document: {_id, <source>, <target>} plus the lease or failure if any.
  std::string document_json(const std::string& id) const;

  awaitable<std::vector<job>> claim(claim_request req) override;
  awaitable<write_result> complete(std::vector<completion> batch) override;
  awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) override;
  awaitable<write_result> release(std::vector<release_item> batch) override;
  awaitable<write_result> fail(std::vector<failure> batch) override;
  awaitable<store_stats> stats() override;
  std::string describe() const override { return "memory"; }

  // The synchronous cores of the awaitables above (also usable without a coroutine).
  std::vector<job> claim_now(const claim_request& req);
  write_result complete_now(const std::vector<completion>& batch);
  renew_result renew_now(const std::vector<renewal>& batch, millis lease);
  write_result release_now(const std::vector<release_item>& batch);
  write_result fail_now(const std::vector<failure>& batch);
  store_stats stats_now() const;
  // admin_store's lease_holders and release_worker, for a store that wraps this one (JSON Lines,
  // tests): who holds leases, and an operator's release of every lease of worker `name`.
  std::vector<lease_holder> lease_holders_now() const;
  std::uint64_t release_worker_now(const std::string& name);
  // ... and list_failed and retry_failed: the failed items `which` selects, listed (by id) or put
  // back to pending (attempts 0, the failure cleared).
  std::vector<failed_item> failed_now(const retry_filter& which) const;
  std::uint64_t retry_failed_now(const retry_filter& which);

 private:
  using record = item_state;
  using expiry_key = std::pair<store_time, std::size_t>;

  // The record whose lease `ref` names, or nullptr when that lease is not held (fencing).
  record* holder(const lease_ref& ref, std::size_t& index);
  void drop_lease(record& r, std::size_t index);
  void move_lease(record& r, std::size_t index, store_time until, bool retrying = false);
  template <class Result, class Item, class Apply>
  Result fenced_batch(const std::vector<Item>& batch, bool live, Apply apply);
  std::string id_of(std::size_t index) const { return std::to_string(index + 1); }
  item view(std::size_t index) const;
  // The failed records `which` selects, by index.
  std::vector<std::size_t> failed_indexes(const retry_filter& which) const;

  options opts_;
  mutable std::mutex mutex_;
  std::vector<record> records_;
  std::deque<std::size_t> pending_;  // no lease, not done, not failed (may hold stale entries)
  std::set<expiry_key> leased_;      // every live or expired lease held, by expiry
  std::set<expiry_key> retrying_;    // the leases given back for a retry, by when it is due
  std::set<expiry_key>& leases_of(const lease_state& l) { return l.retrying ? retrying_ : leased_; }
  std::uint64_t done_ = 0;
  std::uint64_t failed_ = 0;
  std::mt19937_64 token_rng_;
};

}  // namespace dibs
