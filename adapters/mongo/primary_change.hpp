// The error codes of a replica set whose primary is changing (a stepdown, an election, a shutdown):
// the server said nothing about the command or the document, only that it can't take it now. The
// driver retries a retryable write once on them; what still fails is an outage for dibs (the claim
// or the batch is tried again later, no item spends an attempt), never a refusal of an item.
// Decided without a server (tests/unit/test_mongo_write_errors.cpp).
#pragma once

#include <cstdint>

namespace dibs::mongo {

// NotWritablePrimary 10107, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436,
// PrimarySteppedDown 189, InterruptedAtShutdown 11600, InterruptedDueToReplStateChange 11602,
// ShutdownInProgress 91.
constexpr bool primary_changing(std::int64_t code) {
  switch (code) {
    case 10107: case 13435: case 13436: case 189: case 11600: case 11602: case 91: return true;
    default: return false;
  }
}

// The claim's read-back by token after its write landed (update-find, batch): those documents are
// leased to this worker now, so a read that failed for a changing primary or a lost link is read
// again (within claim_read_back_budget) instead of leaving them leased to no one until the lease
// and the grace run out. Any other error goes to the caller.
constexpr bool read_back_again(std::int64_t code, bool link_failed) { return link_failed || primary_changing(code); }
// About an election's length (MongoDB's electionTimeoutMillis is 10 s).
inline constexpr int claim_read_back_budget_ms = 10000;

}  // namespace dibs::mongo
