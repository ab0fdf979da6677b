// find-and-modify: one findAndModify leases a claimable document and returns it (1 round trip per
// item).
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

class find_and_modify final : public claimer {
 public:
  explicit find_and_modify(store_context& ctx) : ctx_(ctx) {}

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    auto proj = claim_projection(f);
    std::vector<job> out;
    bool none_left = false;
    const auto started = std::chrono::steady_clock::now();
    while (out.size() < req.max) {
      if (!out.empty() && std::chrono::steady_clock::now() - started >= claim_time_budget(req.lease)) break;
      const auto t = ctx_.clock.now();
      const auto expired_before = ctx_.clock.earliest() - req.grace;  // by any reading of the server's clock
      const auto token = fresh_token();
      const auto until = t + req.lease;
      auto update = lease_update(f, req.by, token, until);
      find_and_modify_opts_ptr fam(mongoc_find_and_modify_opts_new());
      mongoc_find_and_modify_opts_set_update(fam.get(), update.get());
      mongoc_find_and_modify_opts_set_flags(fam.get(), MONGOC_FIND_AND_MODIFY_RETURN_NEW);
      mongoc_find_and_modify_opts_set_fields(fam.get(), proj.get());
      driver_reply reply;
      bson_error_t err;
      if (!mongoc_collection_find_and_modify_with_opts(coll.get(), claimable_filter(f, expired_before, req.max_attempts).get(), fam.get(),
                                                       reply.out(), &err)) {
        // Documents claimed by earlier round trips are this worker's now: hand them over.
        if (out.empty()) throw mongo_error("claim (findAndModify)", err);
        log::warn("claim (findAndModify) stopped after ", out.size(), " document(s): ", driver_error_text(err));
        break;
      }
      bson_iter_t it;
      if (!bson_iter_init_find(&it, reply.get(), "value") || !BSON_ITER_HOLDS_DOCUMENT(&it)) {
        none_left = true;
        break;
      }
      uint32_t len;
      const uint8_t* data;
      bson_iter_document(&it, &len, &data);
      bson_t doc;
      if (!bson_init_static(&doc, data, len)) break;
      out.push_back(claimed_job(&doc, f, req.by, token, until, read_int(&doc, f.lock_attempts(), 1)));
    }
    if (none_left) fail_exhausted(coll.get(), f, ctx_.clock.earliest() - req.grace, req.max_attempts, ctx_.clock.now());
    return out;
  }

 private:
  store_context& ctx_;
};

}  // namespace

std::unique_ptr<claimer> find_and_modify_claimer(store_context& ctx) { return std::make_unique<find_and_modify>(ctx); }

}  // namespace dibs::mongo
