// Candidates from a random point of the pending documents' _id range, so that workers don't all
// fight over the queue's head (the batch and lock-collection strategies).
//
// ObjectIds are read as 96-bit numbers: the sampler remembers the smallest and the largest pending
// id (re-read every 256 claims, and when a sample comes back empty, since the pending set moves
// on; a look that finds nothing pending is one find and is not remembered), picks a uniformly
// random pivot between them, and reads from the pivot up, wrapping around to the ids below it. A
// pivot that found fewer than a claim above it becomes the range's top, and the range is re-read
// 16 claims later. Collections whose ids are not ObjectIds are read from their head.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>

#include <cstdint>
#include <mutex>
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

 private:
  // Whether anything matched `filter` (the range is remembered only when both ends were read).
  bool learn_range(mongoc_collection_t* coll, const bson_t* filter);
  static constexpr int relearn_after = 256;        // claims
  static constexpr int relearn_after_shrink = 16;  // claims, once shrink_top lowered the top
  void forget_range();
  void shrink_top(u128 to);

  std::mutex mutex_;
  bool known_ = false;
  bool is_oid_ = false;
  u128 min_ = 0, max_ = 0;
  int claims_since_learned_ = 0;
};

}  // namespace dibs::mongo
