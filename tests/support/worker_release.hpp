// The operator's release of a worker's leases, checked the same way on every store: who holds
// leases (lease_holders), release_worker frees exactly NAME's and NAME-<shard>'s, and the fence:
// the released worker's later complete is discarded as lost, the item is claimable at once and
// another worker completes it exactly once. `s` must hold at least 8 pending items and nothing else.
#pragma once

#include "support/eventually.hpp"
#include "support/run_sync.hpp"

#include <dibs/admin_store.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace dibs::test {

inline const lease_holder* holder_named(const std::vector<lease_holder>& hs, const std::string& by) {
  auto it = std::find_if(hs.begin(), hs.end(), [&](const lease_holder& h) { return h.by == by; });
  return it == hs.end() ? nullptr : &*it;
}

inline std::vector<completion> answers_for(const std::vector<job>& jobs, const std::string& answer) {
  std::vector<completion> out;
  for (const auto& j : jobs) out.push_back(completion{j.ref(), answer});
  return out;
}

inline void check_worker_release(admin_store& s) {
  using namespace std::chrono_literals;
  auto claim = [&](std::size_t n, const std::string& by) { return run_sync(s.claim(claim_request{n, by, 60s, 0s})); };
  const auto a0 = claim(2, "web-1-0");
  const auto a1 = claim(1, "web-1-1");
  const auto other = claim(1, "web-12-0");  // not web-1's: a longer name with the same start
  REQUIRE(a0.size() == 2);
  REQUIRE(a1.size() == 1);
  REQUIRE(other.size() == 1);

  auto holders = s.lease_holders();
  REQUIRE(holders.size() == 3);
  REQUIRE(holder_named(holders, "web-1-0"));
  CHECK(holder_named(holders, "web-1-0")->leased == 2);
  CHECK(holder_named(holders, "web-1-0")->expired == 0);
  CHECK(holder_named(holders, "web-1-0")->earliest_until_s > 50);  // a 60 s lease, just taken
  CHECK(holder_named(holders, "web-1-0")->earliest_until_s <= 61);
  CHECK(holder_named(holders, "web-1-1")->leased == 1);
  CHECK(holder_named(holders, "web-12-0")->leased == 1);
  CHECK(holder_named(holders, "web-1-0")->latest_until_s > 50);

  // Issue 29: web-1-0 gives one item back for a retry (a 429) and its time comes before the item
  // is claimed again: that until has passed, the other lease is live. Its latest until says the
  // worker is alive (leases_renewed), whatever the earliest says.
  REQUIRE(run_sync(s.release({release_item{a0[0].ref(), 1ms, "HTTP 429", 429}})).applied == 1);
  REQUIRE(eventually([&] {
    holders = s.lease_holders();
    const auto* h = holder_named(holders, "web-1-0");
    return h && h->expired == 1;
  }, 10s));
  const auto* retrying = holder_named(holders, "web-1-0");
  CHECK(retrying->leased == 2);
  CHECK(retrying->earliest_until_s < 0);
  CHECK(retrying->latest_until_s > 50);
  CHECK(leases_renewed(*retrying));

  CHECK(s.release_worker("WEB-1") == 0);  // a worker's name is compared exactly, case included
  CHECK(s.release_worker("web") == 0);
  CHECK(s.release_worker("web-1") == 3);
  holders = s.lease_holders();
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].by == "web-12-0");
  auto st = run_sync(s.stats());
  CHECK(st.leased_live == 1);

  // The fence: web-1's shards write after the release: discarded, as a lost lease.
  auto late = run_sync(s.complete(answers_for(a0, "{\"late\":true}")));
  CHECK(late.applied == 0);
  CHECK(late.lost.size() == 2);
  late = run_sync(s.complete(answers_for(a1, "{\"late\":true}")));
  CHECK(late.applied == 0);
  CHECK(late.lost.size() == 1);

  // Claimable at once: another worker takes the three (and what was pending), and completes once.
  auto b = claim(100, "b-0");
  std::vector<std::string> released_ids;
  for (const auto& j : a0) released_ids.push_back(j.id);
  released_ids.push_back(a1[0].id);
  for (const auto& id : released_ids) {
    auto it = std::find_if(b.begin(), b.end(), [&](const job& j) { return j.id == id; });
    REQUIRE(it != b.end());
    CHECK(it->attempts == 2);  // the released claim's attempt stays counted, as on an expiry
  }
  const auto done = run_sync(s.complete(answers_for(b, "{\"by\":\"b\"}")));
  CHECK(done.applied == b.size());
  CHECK(done.lost.empty());
  // Only once: the same completions again apply to nothing.
  CHECK(run_sync(s.complete(answers_for(b, "{\"by\":\"b\"}"))).applied == 0);
  st = run_sync(s.stats());
  CHECK(st.done == b.size());
  CHECK(st.leased_live == 1);  // web-12-0's, untouched
  CHECK(s.release_worker("web-12-0") == 1);  // a shard's full id releases that shard alone
  CHECK(s.lease_holders().empty());
}

}  // namespace dibs::test
