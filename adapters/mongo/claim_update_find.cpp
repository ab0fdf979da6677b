// update-find: update_one sets a fresh token on one claimable document, then a find by that token
// reads it (2 round trips per item).
#include "claimer.hpp"

#include "bson_read.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "random_token.hpp"
#include "store_context.hpp"

#include <dibs/log.hpp>

#include <chrono>

namespace dibs::mongo {

namespace {

class update_find final : public claimer {
 public:
  explicit update_find(store_context& ctx) : ctx_(ctx) {}

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    std::vector<job> out;
    bool none_left = false;
    const auto started = std::chrono::steady_clock::now();
    while (out.size() < req.max) {
      if (!out.empty() && std::chrono::steady_clock::now() - started >= claim_time_budget(req.lease)) break;
      const auto t = ctx_.clock.now();
      const auto expired_before = ctx_.clock.earliest() - req.grace;  // by any reading of the server's clock
      const auto token = fresh_token();
      const auto until = t + req.lease;
      driver_reply reply;
      bson_error_t err;
      const bool ok = mongoc_collection_update_one(coll.get(), claimable_filter(f, expired_before, req.max_attempts).get(),
                                                   lease_update(f, req.by, token, until).get(), nullptr, reply.out(), &err);
      if (!ok) {
        // Documents claimed by earlier round trips are this worker's now: hand them over rather
        // than leave them leased to no one until their leases expire.
        if (out.empty()) throw mongo_error("claim (updateOne)", err);
        log::warn("claim (updateOne) stopped after ", out.size(), " document(s): ", driver_error_text(err));
        break;
      }
      if (reply_int(reply.get(), "matchedCount") == 0) {
        none_left = true;
        break;
      }
      auto got = jobs_with_token(coll.get(), f, req.by, token, until, 1);
      // Matched, yet no document holds the token: the update did not take (a server that
      // ignores a $set under a lease field holding a value dibs did not write). The same
      // document would match again at once: stop here rather than spin inside one claim call,
      // which no stop signal can interrupt.
      if (got.empty()) break;
      for (auto& j : got) out.push_back(std::move(j));
    }
    if (none_left) fail_exhausted(coll.get(), f, ctx_.clock.earliest() - req.grace, req.max_attempts, ctx_.clock.now());
    return out;
  }

 private:
  store_context& ctx_;
};

}  // namespace

std::unique_ptr<claimer> update_find_claimer(store_context& ctx) { return std::make_unique<update_find>(ctx); }

}  // namespace dibs::mongo
