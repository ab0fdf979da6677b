// A claim strategy: how a worker takes up to `max` claimable documents and learns their lease.
// One is chosen at construction (mongo_store.cpp); each lives in its own file:
//
//   claim_update_find.cpp       update_one with a fresh token, then find by token (2 round trips/item)
//   claim_find_and_modify.cpp   one findAndModify returning the claimed document (1 round trip/item)
//   claim_batch.cpp             sampled candidate ids -> one updateOne per candidate ($gte: the
//                               candidate or the next claimable one), one token -> find by token
//                               (3 round trips per batch)
//   claim_lock_collection.cpp   locks are documents of another collection; the unique _id decides
//
// Conflicts (candidates another worker took first, lost to this claim) are counted in
// store_context::conflicts; only lock-collection has them.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/protocol.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/job.hpp>
#include <dibs/store.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace dibs::mongo {

struct store_context;

class claimer {
 public:
  explicit claimer(store_context& ctx) : ctx_(ctx) {}
  virtual ~claimer() = default;
  // Blocking; throws mongo_error when the driver fails.
  virtual std::vector<job> claim(const claim_request& req) = 0;

 protected:
  store_context& ctx_;
};

std::unique_ptr<claimer> update_find_claimer(store_context& ctx);
std::unique_ptr<claimer> find_and_modify_claimer(store_context& ctx);
std::unique_ptr<claimer> batch_claimer(store_context& ctx);
std::unique_ptr<claimer> lock_collection_claimer(store_context& ctx);

// How long a claim that takes documents one round trip each (update-find, find-and-modify) may
// go on taking more: the first document's lease runs meanwhile, and a claim of many documents on
// a busy server could outlast its leases, handing over documents other workers can already take.
// An eighth of the lease: the rest is the engine's (renewals are due at half the lease, counted
// from when the claim was asked).
inline millis claim_time_budget(millis lease) { return lease / 8; }

// The loop of the strategies that take one document per round trip (update-find,
// find-and-modify; claim_one_by_one.cpp): up to req.max documents within claim_time_budget, each
// with a fresh token. `take` makes one round trip for the lease `step` describes, adding what it
// took to `out`. A driver error (`failed`, `err` filled) ends the claim: thrown when nothing was
// taken yet, else logged and what was taken handed over (leased to this worker, it must not be
// left leased to no one). `what` names the round trip in both ("claim (updateOne)"). When
// nothing claimable is left, the documents out of attempts are failed (fail_exhausted).
struct claim_step {
  claim_cutoffs cut;  // which leases ran out for this claim (grace and clock error allowed for)
  std::uint64_t token;
  store_time until;
};
enum class take_result { took, none_left, stop, failed };
using take_one_fn =
    std::function<take_result(mongoc_collection_t* coll, const claim_step& step, std::vector<job>& out, bson_error_t& err)>;
std::vector<job> claim_one_by_one(store_context& ctx, const claim_request& req, const char* what, const take_one_fn& take);

// The engine's job for a claimed document.
job claimed_job(const bson_t* doc, const field_names& f, const std::string& by, std::uint64_t token, store_time until,
                int attempts);
// Fails the documents a claim with `max_attempts` (> 0) leaves out for their attempts
// (protocol.hpp: exhausted_filter), claimable otherwise: claimed that many times, every lease run
// out with no outcome written. A claim that found nothing more to take calls it: such documents
// would keep a run from ending. A failure is logged, not thrown (the documents claimed so far
// must be handed over; the next claim tries again). Returns how many it failed.
std::int64_t fail_exhausted(mongoc_collection_t* coll, const field_names& f, const claim_cutoffs& cut, int max_attempts,
                            store_time now);

// The documents leased with `token` (at most `limit`, 0 = all), as jobs.
std::vector<job> jobs_with_token(mongoc_collection_t* coll, const field_names& f, const std::string& by,
                                 std::uint64_t token, store_time until, std::int64_t limit);

}  // namespace dibs::mongo
