// find-and-modify: one findAndModify leases a claimable document and returns it (1 round trip per
// item).
#include "claimer.hpp"

#include "bson_read.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {

class find_and_modify final : public claimer {
 public:
  using claimer::claimer;

  std::vector<job> claim(const claim_request& req) override {
    const auto& f = ctx_.names();
    auto proj = claim_projection(f);
    const auto take = [&](mongoc_collection_t* coll, const claim_step& step, std::vector<job>& out, bson_error_t& err) {
      auto update = lease_update(f, req.by, step.token, step.until);
      find_and_modify_opts_ptr fam(mongoc_find_and_modify_opts_new());
      mongoc_find_and_modify_opts_set_update(fam.get(), update.get());
      mongoc_find_and_modify_opts_set_flags(fam.get(), MONGOC_FIND_AND_MODIFY_RETURN_NEW);
      mongoc_find_and_modify_opts_set_fields(fam.get(), proj.get());
      driver_reply reply;
      if (!mongoc_collection_find_and_modify_with_opts(coll, claimable_filter(f, step.cut, req.max_attempts).get(),
                                                       fam.get(), reply.out(), &err))
        return take_result::failed;
      bson_iter_t it;
      if (!bson_iter_init_find(&it, reply.get(), "value") || !BSON_ITER_HOLDS_DOCUMENT(&it)) return take_result::none_left;
      uint32_t len;
      const uint8_t* data;
      bson_iter_document(&it, &len, &data);
      bson_t doc;
      if (!bson_init_static(&doc, data, len)) return take_result::stop;
      out.push_back(claimed_job(&doc, f, req.by, step.token, step.until, read_int(&doc, f.lock_attempts(), 1)));
      return take_result::took;
    };
    return claim_one_by_one(ctx_, req, "claim (findAndModify)", take);
  }
};

}  // namespace

std::unique_ptr<claimer> find_and_modify_claimer(store_context& ctx) { return std::make_unique<find_and_modify>(ctx); }

}  // namespace dibs::mongo
