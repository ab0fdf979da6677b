// The batch-oriented store interface: the claim protocol of docs/protocol.md, one awaitable
// per operation, each operating on a batch so that an adapter can make it one round trip.
//
// Every write after the claim is fenced: it matches the item by id AND by AND token (complete also
// requires the lease to be live by the store's clock). Items whose lease was lost are reported
// back by id, never written.
#pragma once

#include <dibs/job.hpp>
#include <dibs/net.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

// Thrown by a batch write when the server refused the statement for what it carries (a value too
// long or too deep for its column, a packet over the server's limit, a constraint), not because
// the connection failed: the same batch would be refused again. The engine then splits the batch
// until it has found the items the store can't take. Any other exception means "the store is
// unavailable: try the whole batch again later".
class store_refused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by any store call when the store refuses this process the right to do it (a user
// without UPDATE on the table, a DELETE right taken away mid-run): no retry can help. The
// engine ends the run (engine::denied()); what it held is released where the store still lets it.
class store_denied : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct claim_request {
  std::size_t max = 100;
  std::string by;          // worker id: host-pid-shard
  millis lease{60'000};    // until = store now + lease
  // An expired lease is claimable only this long after `until` (every store takes a retry given
  // back by its holder when due, without it: docs/protocol.md).
  millis grace{1'000};
  // > 0: an item claimed this many times already (every lease ran out before an outcome was
  // written: its workers died, stalled or lost the store) is not leased again; the claim records
  // it failed, so no item is ever claimed more often than this, however its leases are lost.
  int max_attempts = 0;
};

struct completion {
  lease_ref ref;
  std::string result_json;  // a JSON object
};

struct renewal {
  lease_ref ref;
};

// Give an item back: at once (delay 0, shutdown) or not before `delay` (retry later).
// A delayed release keeps the lease until the retry time so no other worker calls the API for it.
struct release_item {
  lease_ref ref;
  millis delay{0};
  std::string why;
  int http_status = 0;
  // Given back without an outcome (shutdown, pause, a cancelled call), not retried after a
  // failed attempt: the engine counts these as released. Stores ignore it.
  bool unprocessed = false;
  // Nothing was asked of the API for it under this claim (a pre-flight that refused the run
  // claimed it first): the claim's attempt is given back, so a refused start costs no item an
  // attempt toward max_attempts. Stores honor it.
  bool not_attempted = false;
};

struct failure {
  lease_ref ref;
  std::string reason;
  int http_status = 0;
  int attempts = 0;  // claims so far, recorded with the failure
};

// What a fenced batch write did: how many items it applied to, and which ids no longer held
// the lease (their write was discarded).
struct write_result {
  std::size_t applied = 0;
  std::vector<std::string> lost;
  // Items whose write the store refused for what they carry (an answer BSON or the column can't
  // hold, a validator that says no): nothing was written for them and their lease still holds;
  // (id, the store's reason). The engine fails each with that reason.
  std::vector<std::pair<std::string, std::string>> refused;
};

struct renew_result {
  std::size_t applied = 0;
  std::vector<std::string> lost;
  std::vector<store_time> until;  // new expiry per applied item, in request order of the applied ones
};

struct store_stats {
  std::uint64_t pending = 0;         // target null, not failed, no lease
  std::uint64_t leased_live = 0;     // target null, not failed, lease until >= now
  std::uint64_t leased_expired = 0;  // target null, not failed, lease until < now (claimable past the grace; a retry given back, when due)
  std::uint64_t done = 0;
  std::uint64_t failed = 0;

  std::uint64_t total() const { return pending + leased_live + leased_expired + done + failed; }
  bool drained() const { return pending == 0 && leased_live == 0 && leased_expired == 0; }
};

class store {
 public:
  virtual ~store() = default;

  virtual awaitable<std::vector<job>> claim(claim_request req) = 0;
  virtual awaitable<write_result> complete(std::vector<completion> batch) = 0;
  virtual awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) = 0;
  virtual awaitable<write_result> release(std::vector<release_item> batch) = 0;
  virtual awaitable<write_result> fail(std::vector<failure> batch) = 0;
  virtual awaitable<store_stats> stats() = 0;
  // The counts that say whether anything is left to do here (pending, leased live, leased
  // expired); done and failed may be left 0. What the engine asks each time a claim comes back
  // empty: a store that counts each state with a command of its own (MongoDB) skips two.
  // By default, stats().
  virtual awaitable<store_stats> open_stats() { co_return co_await stats(); }
  // How many items are open (pending or leased), in one command, where that is cheaper than
  // open_stats() (MongoDB: one count, not three); the engine asks it first. By default nullopt:
  // no cheaper count, open_stats() is asked.
  virtual awaitable<std::optional<std::uint64_t>> open_count() { co_return std::nullopt; }

  // The engine is done with these claimed items under these leases (each written, given back,
  // failed, lost to another worker, or left to expire): nothing more is called or written for
  // them under that lease. A store that wraps another and counts claimed items (a call budget:
  // adapters/http/budget/budget_gate.hpp) learns it here; the default does nothing.
  virtual void let_go(const std::vector<lease_ref>& items) { (void)items; }

  // A name for logs and summaries, never containing credentials.
  virtual std::string describe() const = 0;
  // Candidates that another worker claimed first, since start (stores that claim by candidates).
  virtual std::uint64_t claim_conflicts() const { return 0; }
};

}  // namespace dibs
