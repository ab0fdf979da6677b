// batch: candidate ids from a random point of the _id range (id_sampler), one updateMany leasing
// those still claimable with one token, then a find by token (3 round trips per batch).
#include "claimer.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "random_token.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {

class batch final : public claimer {
 public:
  explicit batch(store_context& ctx) : ctx_(ctx) {}

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    auto id_only = id_projection();
    // A few tries: when every candidate was taken by someone else first, look again.
    for (int round = 0; round < 3; ++round) {
      const auto t = ctx_.clock.now();
      const auto threshold = t - req.grace;
      auto cands = ctx_.sampler.sample(coll.get(), claimable_filter(f, threshold).get(), id_only.get(),
                                       static_cast<std::int64_t>(req.max));
      if (cands.empty()) return {};
      std::vector<owned_id> ids;
      for (auto& d : cands)
        if (auto id = doc_id(d.get())) ids.push_back(*id);
      std::vector<bson_value_t> values;
      for (auto& id : ids) values.push_back(id.value());

      const auto token = fresh_token();
      const auto until = t + req.lease;
      driver_reply reply;
      bson_error_t err;
      const bool ok = mongoc_collection_update_many(coll.get(), claimable_filter_in(f, threshold, values).get(),
                                                    lease_update(f, req.by, token, until).get(), nullptr, reply.out(), &err);
      if (!ok) throw mongo_error("claim (updateMany)", err);
      const auto matched = reply_int(reply.get(), "matchedCount");
      ctx_.conflicts += values.size() - static_cast<std::size_t>(matched);
      if (matched == 0) continue;
      return jobs_with_token(coll.get(), f, req.by, token, until, 0);
    }
    return {};
  }

 private:
  store_context& ctx_;
};

}  // namespace

std::unique_ptr<claimer> batch_claimer(store_context& ctx) { return std::make_unique<batch>(ctx); }

}  // namespace dibs::mongo
