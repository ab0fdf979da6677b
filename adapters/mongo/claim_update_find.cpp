// update-find: update_one sets a fresh token on one claimable document, then a find by that token
// reads it (2 round trips per item).
#include "claimer.hpp"

#include "bson_read.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {

class update_find final : public claimer {
 public:
  using claimer::claimer;

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    const auto take = [&](mongoc_collection_t* coll, const claim_step& step, std::vector<job>& out, bson_error_t& err) {
      driver_reply reply;
      const bool ok = mongoc_collection_update_one(coll, claimable_filter(f, step.cut, req.max_attempts).get(),
                                                   lease_update(f, req.by, step.token, step.until).get(), nullptr,
                                                   reply.out(), &err);
      if (!ok) return take_result::failed;
      if (reply_int(reply.get(), "matchedCount") == 0) return take_result::none_left;
      auto got = jobs_with_token(coll, f, req.by, step.token, step.until, 1);
      // Matched, yet no document holds the token: the update did not take (a server that
      // ignores a $set under a lease field holding a value dibs did not write). The same
      // document would match again at once: stop here rather than spin inside one claim call,
      // which no stop signal can interrupt.
      if (got.empty()) return take_result::stop;
      for (auto& j : got) out.push_back(std::move(j));
      return take_result::took;
    };
    return claim_one_by_one(ctx_, req, "claim (updateOne)", take);
  }
};

}  // namespace

std::unique_ptr<claimer> update_find_claimer(store_context& ctx) { return std::make_unique<update_find>(ctx); }

}  // namespace dibs::mongo
