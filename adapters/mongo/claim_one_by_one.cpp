// The loop update-find and find-and-modify share (claimer.hpp: claim_one_by_one).
#include "claimer.hpp"

#include "driver_handles.hpp"
#include "random_token.hpp"
#include "store_context.hpp"

#include <dibs/log.hpp>

#include <chrono>

namespace dibs::mongo {

std::vector<job> claim_one_by_one(store_context& ctx, const claim_request& req, const char* what, const take_one_fn& take) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  std::vector<job> out;
  bool none_left = false;
  const auto started = std::chrono::steady_clock::now();
  while (out.size() < req.max) {
    if (!out.empty() && std::chrono::steady_clock::now() - started >= claim_time_budget(req.lease)) break;
    const auto t = ctx.clock.now();
    const auto cut = cutoffs_at(ctx.clock.earliest(), req.grace);  // by any reading of the server's clock
    const auto token = fresh_token();
    const claim_step step{cut, token, t + req.lease};
    bson_error_t err;
    const auto got = take(db.documents.get(), step, out, err);
    if (got == take_result::failed) {
      // Documents claimed by earlier round trips are this worker's now: hand them over rather
      // than leave them leased to no one until their leases expire.
      if (out.empty()) throw mongo_error(what, err);
      log::warn(what, " stopped after ", out.size(), " document(s): ", driver_error_text(err));
      break;
    }
    if (got == take_result::none_left) {
      none_left = true;
      break;
    }
    if (got == take_result::stop) break;
  }
  if (none_left) fail_exhausted(db.documents.get(), f, cutoffs_at(ctx.clock.earliest(), req.grace), req.max_attempts, ctx.clock.now());
  return out;
}

}  // namespace dibs::mongo
