// batch: a claim that finds its own documents. One bulk write of up to `max` updateOne
// statements, all with the claim's one token: statement i leases the first claimable document at
// or after its own random point of the pending _id range (id_sampler::pivots), then a find by
// token reads what was leased (2 round trips per batch).
//
// Why not candidate ids first (a find, then updateMany {_id: {$in}} ...): a candidate read goes
// stale while other workers claim, and the candidates they took first were lost to this claim
// (measured: 4% of 2,000 documents with one process of 2 shards, 88% with 4 processes). An
// updateOne picks and leases its document in one atomic step on the server, so two workers never
// collide on a document: the server moves the later statement on to the next claimable one. The
// random points spread the workers over the range so that they rarely even scan the same
// documents. A batch that comes back short (points past the last claimable document, or little
// left) reads the range again and tops up once from new points.
#include "claimer.hpp"

#include "collection_ops.hpp"
#include "protocol.hpp"
#include "random_token.hpp"
#include "store_context.hpp"

#include <dibs/log.hpp>

namespace dibs::mongo {

namespace {

class batch final : public claimer {
 public:
  explicit batch(store_context& ctx) : ctx_(ctx) {}

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    const auto t = ctx_.clock.now();
    const auto threshold = t - req.grace;
    const auto token = fresh_token();
    const auto until = t + req.lease;
    const auto points = ctx_.sampler.pivots(coll.get(), claimable_filter(f, threshold).get(), req.max);
    if (!points) return {};  // nothing claimable now

    auto leased = lease(coll.get(), statements_from(*points, threshold, req.by, token, until));
    const auto wanted = static_cast<std::int64_t>(points->statements);
    if (leased < wanted && !points->from.empty()) {
      // Short: points past the last claimable document (the range has moved on), or little left.
      // One more round over the range read again; the head of the collection is not scanned
      // (it holds the finished documents first).
      ctx_.sampler.forget_range();
      const auto missing = static_cast<std::size_t>(wanted - leased);
      if (const auto again = ctx_.sampler.pivots(coll.get(), claimable_filter(f, threshold).get(), missing))
        leased += lease(coll.get(), statements_from(*again, threshold, req.by, token, until));
    }
    if (leased == 0) return {};
    return jobs_with_token(coll.get(), f, req.by, token, until, 0);
  }

 private:
  // One statement per point; ids that are not ObjectIds have no range to spread over (no
  // points): then every statement starts at the head.
  std::vector<fenced_update> statements_from(const id_sampler::claim_points& points, store_time threshold,
                                             const std::string& by, std::uint64_t token, store_time until) const {
    std::vector<fenced_update> out;
    for (const auto& p : points.from) out.push_back(statement(threshold, &p, by, token, until));
    while (out.size() < points.statements) out.push_back(statement(threshold, nullptr, by, token, until));
    return out;
  }

  fenced_update statement(store_time threshold, const bson_oid_t* from, const std::string& by, std::uint64_t token,
                          store_time until) const {
    const auto& f = ctx_.names();
    return {claimable_filter_from(f, threshold, from), lease_update(f, by, token, until)};
  }

  // The documents the statements leased. A statement the server refused (a write error) leased
  // nothing; the others did, and are returned by the find by token, not left to expire.
  std::int64_t lease(mongoc_collection_t* coll, const std::vector<fenced_update>& statements) {
    const auto verdict = bulk_update(coll, statements, "claim (bulk updateOne)");
    if (!verdict.refused.empty()) {
      const auto why = refusal_reason(verdict.refused.front());
      if (verdict.matched == 0) throw mongo_error("claim (bulk updateOne): " + why);
      log::warn("claim: the server refused ", verdict.refused.size(), " statement(s): ", why);
    }
    return verdict.matched;
  }

  store_context& ctx_;
};

}  // namespace

std::unique_ptr<claimer> batch_claimer(store_context& ctx) { return std::make_unique<batch>(ctx); }

}  // namespace dibs::mongo
