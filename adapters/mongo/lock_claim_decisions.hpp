// Sans-io decisions of the lock-collection claim (claim_lock_collection.cpp does the I/O).
//
// A lock is a document {_id: <doc id>, by, token, until, ...} in the lock collection; the unique
// _id lets exactly one worker insert it. A claim reads candidates, looks up which of them are
// locked, inserts locks for the free ones, takes over those expired beyond the grace, and finally
// reads back its locks and their documents. Each step's decision is here.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/protocol.hpp>

#include <dibs/job.hpp>

#include <cstddef>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace dibs::mongo {

// When each lock document runs out, by id text: its `until` (the epoch when it has none: run
// out), and whether its holder gave it back for a retry (token given_back_token).
struct lock_expiry {
  store_time until{};
  bool given_back = false;
};
std::unordered_map<std::string, lock_expiry> lock_expiries(const std::vector<bson_ptr>& locks);

// Which candidates (ids as text, in the order read) to go for, up to `max` in all: `free` ones
// have no lock (insert one), `expired` ones have a lock that ran out at `cut` (claimable_at:
// take it over). Candidates locked by someone live are skipped. Indexes into `candidates`.
struct lock_targets {
  std::vector<std::size_t> free;
  std::vector<std::size_t> expired;
  bool empty() const { return free.empty() && expired.empty(); }
};
// Candidates in `exhausted` are skipped (exhausted_locks).
lock_targets choose_lock_targets(const std::vector<std::string>& candidates,
                                 const std::unordered_map<std::string, lock_expiry>& locked_until,
                                 const claim_cutoffs& cut, std::size_t max,
                                 const std::unordered_set<std::string>& exhausted = {});

// The locks (id texts) a claim with `max_attempts` (> 0) must not take over: run out at `cut`,
// and taken that many times already (every lease ran out with no outcome
// written). Their documents are failed instead, so no document is claimed past max_attempts.
std::unordered_set<std::string> exhausted_locks(const std::vector<bson_ptr>& locks, const claim_cutoffs& cut,
                                                int max_attempts);

// The verdict on the unordered insert of a claim's locks. A duplicate-key error (11000) means
// another worker inserted that lock between our read and our insert: a conflict, not a failure;
// the other locks of the batch were inserted. Only an insert that failed with no duplicate-key
// error at all is a failure of the claim.
struct lock_insert_verdict {
  std::size_t raced = 0;  // locks someone else won
  bool failed = false;    // throw: the insert failed for another reason
};
lock_insert_verdict judge_lock_insert(const bson_t* reply, bool executed);

// The locks this claim holds (`held`, id text -> attempts) whose document is no longer open
// (`open`, id texts): finished by another worker between our candidate read and our lock (its
// lock already gone). They are conflicts, and their locks are to be removed.
std::vector<lease_ref> stale_locks(const std::unordered_map<std::string, int>& held,
                                   const std::unordered_set<std::string>& open, const std::string& by,
                                   std::uint64_t token);

}  // namespace dibs::mongo
