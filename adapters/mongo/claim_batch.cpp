// batch: a claim whose statements find their own documents. Candidate _ids from a random point of
// the pending _id range (id_sampler, projection _id only), then one bulk write of one updateOne
// per candidate, all with the claim's one token: statement i leases its candidate, or, when
// another worker took that one first, the first claimable document after it; then a find by token
// reads what was leased (3 round trips per batch).
//
// Why not updateMany({_id: {$in: candidates}}): a candidate read goes stale while other workers
// claim, and every candidate they took first was lost to this claim (measured on the stand-in:
// 10% of 2,000 documents with one process of 2 shards, 63% with 8 processes). An updateOne picks
// and leases its document in one atomic step on the server, so two workers never collide on a
// document: the later statement moves on to the next claimable one. The candidates make each
// statement start right at a document that was claimable a moment ago (an index seek, not a
// scan over leased and finished documents), and the random start spreads the workers.
#include "claimer.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "protocol.hpp"
#include "random_token.hpp"
#include "store_context.hpp"

#include <dibs/log.hpp>

namespace dibs::mongo {

namespace {

class batch final : public claimer {
 public:
  using claimer::claimer;

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    const store_session db(ctx_);
    auto id_only = id_projection();
    const auto t = ctx_.clock.now();
    const auto cut = cutoffs_at(ctx_.clock.earliest(), req.grace);  // run out by any reading of the server's clock
    auto cands = ctx_.sampler.sample(db.documents.get(), claimable_filter(f, cut, req.max_attempts).get(), id_only.get(),
                                     static_cast<std::int64_t>(req.max));
    // Fewer candidates than asked: the rest of what looks claimable may be at max_attempts.
    if (cands.size() < req.max) fail_exhausted(db.documents.get(), f, cut, req.max_attempts, t);
    if (cands.empty()) return {};

    const auto token = fresh_token();
    const auto until = t + req.lease;
    std::vector<fenced_update> statements;
    for (auto& d : cands)
      if (auto id = doc_id(d.get()))
        statements.push_back({claimable_filter_from(f, cut, id->value(), req.max_attempts), lease_update(f, req.by, token, until)});
    if (lease(db.documents.get(), statements) == 0) return {};
    return jobs_with_token(db.documents.get(), f, req.by, token, until, 0);
  }

 private:
  // The documents the statements leased. A statement the server refused (a write error) leased
  // nothing; the others did, and are returned by the find by token, not left to expire.
  static std::int64_t lease(mongoc_collection_t* coll, const std::vector<fenced_update>& statements) {
    const auto verdict = bulk_update(coll, statements, "claim (bulk updateOne)");
    if (!verdict.refused.empty()) {
      const auto why = refusal_reason(verdict.refused.front());
      // Every lease refused (a validator of the collection's): the next claim would be too.
      if (verdict.matched == 0) throw store_refused("claim (bulk updateOne): " + why);
      log::warn("claim: the server refused ", verdict.refused.size(), " statement(s): ", why);
    }
    return verdict.matched;
  }
};

}  // namespace

std::unique_ptr<claimer> batch_claimer(store_context& ctx) { return std::make_unique<batch>(ctx); }

}  // namespace dibs::mongo
