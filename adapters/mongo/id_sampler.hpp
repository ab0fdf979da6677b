// Random points of the pending documents' _id range, so that workers don't all fight over the
// queue's head: the lock-collection strategy reads candidates from one (sample), the batch
// strategy starts each statement of its claim at one (pivots).
//
// ObjectIds are read as 96-bit numbers: the sampler remembers the smallest and the largest pending
// id (re-read every 256 claims, and when a sample comes back empty, since the pending set moves
// on), picks a uniformly random pivot between them, and reads from the pivot up, wrapping around
// to the ids below it. Collections whose ids are not ObjectIds are read from their head.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace dibs::mongo {

using u128 = unsigned __int128;
u128 oid_number(const bson_oid_t& o);
bson_oid_t oid_from_number(u128 v);
// The pivot between `lo` and `hi` (inclusive) that the random number `r` picks.
bson_oid_t pivot_between(u128 lo, u128 hi, u128 r);

class id_sampler {
 public:
  // Up to `limit` documents matching `filter` (projection `proj`). Throws mongo_error.
  std::vector<bson_ptr> sample(mongoc_collection_t* coll, const bson_t* filter, const bson_t* proj, std::int64_t limit);
  // Where up to `count` claim statements start: random points of the range of the documents
  // matching `filter`, ascending (none when their ids are not ObjectIds: start at the head then).
  // Fewer than `count` when the range was just read and held fewer documents (statements beyond
  // those would scan for nothing). nullopt when no document matches.
  struct claim_points {
    std::size_t statements = 0;
    std::vector<bson_oid_t> from;  // `statements` points, or empty
  };
  std::optional<claim_points> pivots(mongoc_collection_t* coll, const bson_t* filter, std::size_t count);
  // The range is read again on the next call (a claim came back short: the range has moved on).
  void forget_range();

 private:
  // Reads the smallest `want` ids and the largest one.
  void learn_range(mongoc_collection_t* coll, const bson_t* filter, std::size_t want);

  std::mutex mutex_;
  bool known_ = false;
  bool is_oid_ = false;
  bool none_ = false;         // nothing matched when the range was read
  std::size_t only_ = 0;      // fewer matched than wanted: this many (0: enough)
  u128 min_ = 0, max_ = 0;
  int claims_since_learned_ = 0;
};

}  // namespace dibs::mongo
