// The shard's lease keeper: every interval it renews the leases due (held_leases.hpp: the book
// and what a renewal's answer means), those of items still being worked on, waiting for the API,
// or buffered unwritten; and what the shard does when the store denies it a right.
#include "shard.hpp"

#include <dibs/log.hpp>

#include <algorithm>

namespace dibs {

void shard::store_denied_here(const std::string& why) {
  if (ctx_.denied) ctx_.denied(why);
  begin_stopping();
  wake_.notify();
}

awaitable<void> shard::keeper([[maybe_unused]] gate::holder running) {
  const auto interval = std::clamp<steady::duration>(cfg_.lease / 4, millis{5}, millis{5000});
  while (!finishing()) {
    co_await keeper_wake_.wait_for(interval);
    if (finishing()) break;

    const auto now = steady::now();
    auto due = held_.due(now, by_);
    if (due.empty()) continue;

    try {
      auto r = co_await ctx_.st.renew(due, cfg_.lease);
      bump(ctx_.figures.renewals, r.applied);
      held_.renewed(due, r.lost, now, cfg_.lease);
    } catch (const store_denied& e) {
      bump(ctx_.figures.store_errors);
      store_denied_here(e.what());
    } catch (const std::exception& e) {
      bump(ctx_.figures.store_errors);
      log::warn("shard ", index_, ": renewing ", due.size(), " lease(s) failed: ", e.what());
    }
  }
}

}  // namespace dibs
