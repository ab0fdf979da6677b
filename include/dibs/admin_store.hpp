// A store that a command line can administer: seed it, count it, watch it, and put its failed
// items back. The engine needs only `store`; `dibs seed`, `dibs status`, `dibs retry` and
// `dibs enrich follow` use this too.
#pragma once

#include <dibs/setting_error.hpp>
#include <dibs/store.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dibs {

// One open item (not done, not failed), read without claiming it: what `dibs enrich` checks the
// url template against before it claims anything (the pre-flight).
struct pending_sample {
  std::string id;                   // as the engine and the logs name it
  job_field source;                 // the store's source field, read as a claim reads it
  std::vector<std::string> fields;  // the names the item has (SQL: the table's columns)
  std::vector<job_field> more;      // the more fields a claim hands the processor (store_options::more_fields)
};

// Which failed items `retry_failed` puts back (`dibs retry reason/since`). Empty: all.
struct retry_filter {
  std::string reason_contains;  // the failure's reason contains this text ("" = any reason)
  // ... or, when set, is this text: the group `failure_reasons` counted (the dashboard's "Retry
  // these", the retry command's reason filter), compared as the store groups reasons.
  std::optional<std::string> reason_is;
  // Failed at or after this time by the store's clock; either a moment or a span before the
  // store's own now (so a client with a wrong clock still means "the last two hours").
  std::optional<store_time> since;
  std::optional<std::chrono::milliseconds> since_ago;
  // ... and, when not empty, is one of these items (their ids as the store names them: the
  // "key" of `dibs failed`'s lines, which `dibs retry from` feeds back).
  std::vector<std::string> ids;
  bool selects_all() const { return reason_contains.empty() && !reason_is && !since && !since_ago && ids.empty(); }
};

// Whether `id` is among `ids` (a set made of retry_filter::ids), or `ids` is empty: any id.
template <class Set>
bool id_selected(const Set& ids, const std::string& id) {
  return ids.empty() || ids.count(id) > 0;
}

// One failed item as the store keeps it (`dibs failed`).
struct failed_item {
  std::string id;                     // as the engine and the logs name it
  std::optional<std::string> source;  // the source field's value as text; nullopt when missing
  std::string reason;
  int http_status = 0;  // the API's last status, 0 when none
  int attempts = 0;
  std::optional<store_time> failed_at;  // nullopt when the store keeps no time (JSON Lines)
};

// One line of the failure breakdown: a reason, how many failed items hold it, and a few of them.
struct failure_reason {
  std::string reason;
  std::uint64_t count = 0;
  std::vector<std::string> example_ids;  // one or two
};

// Who holds leases in the store: one line per lease holder (`by`, a shard's worker id), for
// `dibs status` and GET /workers. Stores keep no claim time, only each lease's expiry (until):
// a lease is renewed by moving its until, so "how old" can only be told from the until as
// "how long since it was last taken or renewed" (lease length - time left). A dead worker's
// leases stop moving: their until falls behind the store's now, which `earliest_until_s` shows.
// Items given back for a retry keep their lease until the retry is due, so they count here too,
// and once that time has passed (the worker has not claimed them again yet) their until is behind
// the store's now exactly as a dead worker's is: `expired` alone can't tell a live worker from a
// dead one. The latest until can: a live worker renews what it holds (every half lease), so
// while it holds anything its latest until stays ahead of now (leases_renewed below).
struct lease_holder {
  std::string by;
  std::uint64_t leased = 0;   // open items whose lease names `by`, live or expired
  std::uint64_t expired = 0;  // of which the until has passed by the store's clock
  // Seconds from the store's now to the earliest until among them: negative when it has passed.
  double earliest_until_s = 0;
  // Seconds from the store's now to the latest until among them: negative when every one has passed.
  double latest_until_s = 0;
};

// Whether `h`'s leases are still being taken or renewed (or its items given back for a retry not
// due yet): its latest until is ahead of the store's now. False for a worker that died, stalled
// or lost the store more than a lease ago: every until it set has passed.
inline bool leases_renewed(const lease_holder& h) { return h.latest_until_s > 0; }

class admin_store : public store {
 public:
  // Inserts `n` pending items whose source is a random public IPv4 address; returns how many.
  virtual std::size_t seed(std::size_t n, std::uint64_t seed) = 0;
  // seed() with the sources drawn from `distinct` addresses, the popular ones far more often
  // (profiles/ipapi/skewed_draw.hpp); distinct 0 is seed().
  virtual std::size_t seed_skewed(std::size_t n, std::uint64_t seed_value, std::size_t distinct) {
    if (distinct == 0) return seed(n, seed_value);
    throw std::invalid_argument(describe() + " can't seed " + setting_name("distinct"));
  }
  // stats(), callable without a coroutine (not from a shard thread: it blocks).
  virtual store_stats stats_blocking() = 0;
  // open_stats(), as stats_blocking() is stats(); by default stats_blocking().
  virtual store_stats open_stats_blocking() { return stats_blocking(); }
  // open_count(), as open_stats_blocking() is open_stats(): asked only where counts_open().
  virtual bool counts_open() const { return false; }
  virtual std::uint64_t open_count_blocking() { return 0; }
  // Failed items that match `which` back to pending: attempts 0, the failure's reason, status
  // and time cleared. Never touches a pending, leased or done item. Returns how many it reset.
  virtual std::uint64_t retry_failed(const retry_filter& /*which*/) {
    throw std::invalid_argument(describe() + " can't put failed items back");
  }
  // Every failed item that `which` selects, handed to `each` one by one (a store may read them
  // in pages: a table can hold millions). Reads only.
  virtual void list_failed(const retry_filter& /*which*/, const std::function<void(const failed_item&)>& /*each*/) {
    throw std::invalid_argument(describe() + " can't list its failed items");
  }
  // The `top` most frequent failure reasons, most frequent first (ties by reason).
  virtual std::vector<failure_reason> failure_reasons(std::size_t /*top*/) { return {}; }
  // Of the done items, how many hold the API's definitive "no data" as their answer (a target
  // whose top-level "status" is "fail": ip-api's profile, outcome::no_data); `dibs status` counts
  // them apart. nullopt when the store can't tell.
  virtual std::optional<std::uint64_t> no_data_count() { return std::nullopt; }
  // Every lease holder, by `by` (lease_holder above).
  virtual std::vector<lease_holder> lease_holders() {
    throw std::invalid_argument(describe() + " can't list its lease holders");
  }
  // An operator's release of every lease of worker `name` (worker_owns: NAME or NAME-<shard>),
  // live or expired: the lease is cleared (by, token, until) as if it had expired, so the item is
  // claimable at once. The attempt the claim counted stays counted, as on an expiry: a worker
  // that died of an item must not get it back forever. Fenced like an expiry: the worker's later
  // write matches no lease and is discarded as lost. Returns how many leases it cleared.
  virtual std::uint64_t release_worker(const std::string& /*name*/) {
    throw std::invalid_argument(describe() + " can't release a worker's leases");
  }
  // Calls `on_change` when new work may have arrived; false when the store can't tell.
  virtual bool watch(std::function<void()> /*on_change*/) { return false; }
  virtual void stop_watching() {}
  // After a run (`drained`: nothing pending or leased): a store that has more to do at the end
  // does it here (the JSON Lines store writes OUT). Returns what the user should be told.
  virtual std::string finish(bool /*drained*/) { return {}; }
  // Before a run: throws std::invalid_argument naming the first right the store's user lacks to
  // claim and write back (read, update, and delete with on_done delete) and the GRANT that
  // gives it. Changes nothing. Stores without rights of their own do nothing.
  virtual void check_write_rights() {}
  // Up to `n` open items, those whose source field is usable first (the pre-flight asks the API
  // for more than one when the first is "not found"), or none when none is open (or the store
  // can't tell). Reads only: no lease is taken, no attempt spent.
  virtual std::vector<pending_sample> sample_pending_items(std::size_t /*n*/) { return {}; }
  // One open item, preferably one whose source field is usable (the first of sample_pending_items).
  virtual std::optional<pending_sample> sample_pending() {
    auto items = sample_pending_items(1);
    if (items.empty()) return std::nullopt;
    return std::move(items.front());
  }
  // One item already done (its target set) whose source field is usable, read the same way; the
  // pre-flight asks the API for it when every pending item it asked is "not found" (a wrong path,
  // or items the API has nothing for?). nullopt when none is done (or the store can't tell).
  virtual std::optional<pending_sample> sample_done() { return std::nullopt; }
};

}  // namespace dibs
