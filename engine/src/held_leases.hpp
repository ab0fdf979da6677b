// The leases one shard holds, by item id: the lease keeper's book, with no store and no clock of
// its own (tests/unit/test_held_leases.cpp). Which leases are due for renewal, what a renewal's
// answer means for each, and lookups under a lease's token: an item claimed again under a new
// token is a new lease, and what the old one's pipeline or write says must not touch it.
#pragma once

#include "item_tracer.hpp"

#include <dibs/job.hpp>
#include <dibs/store.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace dibs {

struct held_lease {
  std::uint64_t token = 0;
  // The worker the lease was claimed as, when not the shard's own (an item the pre-flight claimed
  // and handed over): renewed under that name, as the store fences it. Empty: the shard's.
  std::string by;
  std::chrono::steady_clock::time_point renew_due{};
  std::chrono::steady_clock::time_point claimed_at{};
  bool lost = false;     // the keeper found the lease gone: don't write this item's outcome
  bool settled = false;  // its outcome is buffered, waiting for the flusher
  std::uint64_t pipeline = 0;  // the pipeline running it, once launched
  int attempts = 0;            // claims so far, this one included
  bool excused = false;  // had its free answer as a waiter (a 5xx in an outage): another spends its attempt
  bool probed = false;   // had its free answer as the breaker's probe
  // The shard's count of recoveries (the circuit closing) when its call was launched: a failure
  // answered after a recovery its call predates met the outage.
  std::uint64_t recoveries_at_launch = 0;
  bool no_data = false;  // its answer, buffered, is the API's "no data" (counted apart once written)
  std::unique_ptr<item_trace> trace;  // when the run traces (item_tracer.hpp)
};

class held_leases {
 public:
  using clock = std::chrono::steady_clock;

  // A claimed item's fresh lease, due for renewal at half `lease` after `asked` (the lease began
  // at the store while the claim ran, perhaps long before it came back). True when the item is new
  // to the book; false when it replaces a lease of the same item (held before under another
  // token, lost, claimed again; or the same lease twice): the book already counted the item.
  bool add(const job& j, clock::time_point asked, clock::time_point now, std::chrono::milliseconds lease,
           const std::string& own_by = {});

  // The item's lease under any token (nullptr when not held).
  held_lease* find(const std::string& id);
  const held_lease* find(const std::string& id) const;
  // The item's lease if it is still the one under `token` (nullptr otherwise).
  held_lease* under(const std::string& id, std::uint64_t token);
  const held_lease* under(const std::string& id, std::uint64_t token) const;
  // Under `token` and not found lost by the keeper: the item's outcome may be written.
  bool kept(const std::string& id, std::uint64_t token) const;
  // Drops the lease if it is the one under `token`; true when it did.
  bool forget(const std::string& id, std::uint64_t token);

  // The renewals due at `now`: every lease not lost whose renew_due has come, in `by`'s name.
  std::vector<renewal> due(clock::time_point now, const std::string& by) const;
  // What the store answered to `sent` (renewals asked at `asked`): a lease the store named `lost`
  // is lost, unless its outcome is already buffered (its write will tell: it is left as it was);
  // the others are due again half a lease after `asked`. A lease forgotten or claimed anew
  // meanwhile is left as it is.
  void renewed(const std::vector<renewal>& sent, const std::vector<std::string>& lost, clock::time_point asked,
               std::chrono::milliseconds lease);

  std::size_t size() const { return leases_.size(); }

 private:
  std::unordered_map<std::string, held_lease> leases_;
};

}  // namespace dibs
