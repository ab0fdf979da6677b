#include "store_suite.hpp"

#include "run_sync.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <thread>

namespace dibs::test {

using namespace std::chrono_literals;

namespace {
claim_request req(std::size_t max, const std::string& by, std::chrono::milliseconds lease,
                  std::chrono::milliseconds grace) {
  return claim_request{max, by, lease, grace};
}
std::vector<job> claim(store& s, claim_request r) { return run_sync(s.claim(std::move(r))); }
write_result complete(store& s, const job& j, const std::string& json) {
  return run_sync(s.complete({completion{j.ref(), json}}));
}
}  // namespace

void run_store_suite(store_harness& h) {
  const auto m = h.margin();
  const auto lease = 3 * m;
  const auto grace = 2 * m;

  SECTION("a claim leases pending items with fresh tokens and counts the attempt") {
    auto ids = h.seed(5);
    auto s = h.open();
    auto got = claim(*s, req(3, "w1", lease, grace));
    REQUIRE(got.size() == 3);
    std::set<std::uint64_t> tokens;  // one per item, or one per batch claim (batch strategies)
    for (const auto& j : got) {
      CHECK(j.by == "w1");
      CHECK(j.attempts == 1);
      CHECK(j.token != 0);
      tokens.insert(j.token);
      REQUIRE(j.fields.size() >= 1);
      CHECK(j.fields[0].st == job_field::state::string);
    }
    auto next = claim(*s, req(1, "w1", lease, grace));
    REQUIRE(next.size() == 1);
    CHECK_FALSE(tokens.count(next[0].token));  // a new claim never reuses a token
    auto back = run_sync(s->release({release_item{next[0].ref(), std::chrono::milliseconds(0), "", 0}}));
    CHECK(back.applied == 1);
    auto st = run_sync(s->stats());
    CHECK(st.pending == 2);
    CHECK(st.leased_live == 3);
    CHECK(st.done == 0);
  }

  SECTION("concurrent claimers never share an item") {
    const std::size_t n = 600;
    auto ids = h.seed(n);
    std::vector<std::vector<std::string>> claimed(4);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < claimed.size(); ++t) {
      threads.emplace_back([&, t] {
        auto s = h.open();
        const std::string by = "w" + std::to_string(t);
        // An empty claim can be transient (every candidate taken by someone else first): stop
        // only once the store says nothing is pending.
        for (int rounds = 0; rounds < 10'000; ++rounds) {
          auto got = claim(*s, req(7, by, std::chrono::milliseconds(60'000), grace));
          for (const auto& j : got) claimed[t].push_back(j.id);
          if (got.empty() && run_sync(s->stats()).pending == 0) break;
        }
      });
    }
    for (auto& t : threads) t.join();
    std::vector<std::string> all;
    for (const auto& c : claimed) all.insert(all.end(), c.begin(), c.end());
    std::set<std::string> unique(all.begin(), all.end());
    CHECK(all.size() == unique.size());
    CHECK(unique.size() == n);
  }

  SECTION("an expired lease is taken over only after the grace, and the old holder is fenced") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    CHECK(claim(*s, req(1, "B", lease, grace)).empty());
    h.let_time_pass(lease + m);  // expired (by a margin), but within the grace (by a margin)
    CHECK(claim(*s, req(1, "B", lease, grace)).empty());
    h.let_time_pass(grace);  // now past the grace, by a margin
    auto b = claim(*s, req(1, "B", lease, grace));
    REQUIRE(b.size() == 1);
    CHECK(b[0].id == a[0].id);
    CHECK(b[0].attempts == 2);
    CHECK(b[0].token != a[0].token);

    auto stale = complete(*s, a[0], R"({"by":"A"})");
    CHECK(stale.applied == 0);
    REQUIRE(stale.lost.size() == 1);
    CHECK(stale.lost[0] == a[0].id);
    CHECK_FALSE(h.target_of(a[0].id).has_value());

    auto fresh = complete(*s, b[0], R"({"by":"B"})");
    CHECK(fresh.applied == 1);
    REQUIRE(h.target_of(b[0].id).has_value());
    CHECK(h.target_of(b[0].id)->find("\"B\"") != std::string::npos);
  }

  SECTION("a completion with a stale token or another worker's name writes nothing") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    job forged = a[0];
    forged.token ^= 0x5a5a;
    auto r1 = complete(*s, forged, R"({"x":1})");
    CHECK(r1.applied == 0);
    CHECK(r1.lost.size() == 1);
    job impostor = a[0];
    impostor.by = "Z";
    auto r2 = complete(*s, impostor, R"({"x":2})");
    CHECK(r2.applied == 0);
    CHECK_FALSE(h.target_of(a[0].id).has_value());
    auto st = run_sync(s->stats());
    CHECK(st.leased_live == 1);
    CHECK(complete(*s, a[0], R"({"x":3})").applied == 1);
    CHECK(run_sync(s->stats()).done == 1);
  }

  SECTION("a completion after the lease expired is refused even if nobody took the item") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    h.let_time_pass(lease + m);
    auto r = complete(*s, a[0], R"({"late":true})");
    CHECK(r.applied == 0);
    CHECK(r.lost.size() == 1);
    CHECK_FALSE(h.target_of(a[0].id).has_value());
  }

  SECTION("renewal keeps a lease alive past its first expiry") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    h.let_time_pass(lease - m);  // a margin before the first expiry
    auto rn = run_sync(s->renew({renewal{a[0].ref()}}, lease));
    CHECK(rn.applied == 1);
    CHECK(rn.lost.empty());
    h.let_time_pass(2 * m);  // a margin past the first expiry, a margin within the renewed one
    CHECK(claim(*s, req(1, "B", lease, std::chrono::milliseconds(0))).empty());
    CHECK(complete(*s, a[0], R"({"ok":true})").applied == 1);
  }

  SECTION("renewing someone else's lease fails") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    job other = a[0];
    other.token += 1;
    auto rn = run_sync(s->renew({renewal{other.ref()}}, lease));
    CHECK(rn.applied == 0);
    CHECK(rn.lost.size() == 1);
  }

  SECTION("release makes an item claimable at once; a delayed release keeps it until then, and no grace after") {
    auto ids = h.seed(2);
    auto s = h.open();
    auto a = claim(*s, req(2, "A", lease, grace));
    REQUIRE(a.size() == 2);
    auto r = run_sync(s->release({release_item{a[0].ref(), std::chrono::milliseconds(0), "shutdown", 0},
                                  release_item{a[1].ref(), 2 * m, "HTTP 503", 503}}));
    CHECK(r.applied == 2);
    auto b = claim(*s, req(2, "B", std::chrono::milliseconds(600'000), grace));
    REQUIRE(b.size() == 1);
    CHECK(b[0].id == a[0].id);
    // Read at once, two margins before the retry is due: read after the wait below, the count had
    // one margin left for two more round trips (each a new connection of a SQL store), and a loaded
    // machine spent it (the retry was due, and counted as expired).
    const auto waiting = run_sync(s->stats());
    CHECK(waiting.leased_live == 2);  // B's lease and the retry, both still counted as leased
    CHECK(waiting.pending == 0);
    h.let_time_pass(m);  // the retry is not due yet
    CHECK(claim(*s, req(2, "B", lease, grace)).empty());
    // A margin past its retry time, a margin before the grace would run out: its holder gave it
    // back, so nobody is at work on it whom the grace would protect.
    h.let_time_pass(2 * m);
    auto c = claim(*s, req(2, "B", lease, grace));
    REQUIRE(c.size() == 1);
    CHECK(c[0].id == a[1].id);
    CHECK(c[0].attempts == 2);
  }

  SECTION("a failed item is never claimed again and keeps its reason") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    auto f = run_sync(s->fail({failure{a[0].ref(), "HTTP 404 Not Found", 404}}));
    CHECK(f.applied == 1);
    h.let_time_pass(lease + grace + m);
    CHECK(claim(*s, req(1, "B", lease, grace)).empty());
    auto st = run_sync(s->stats());
    CHECK(st.failed == 1);
    CHECK(st.pending == 0);
    CHECK(st.leased_live + st.leased_expired == 0);
    CHECK_FALSE(h.target_of(a[0].id).has_value());
  }

  SECTION("an item whose every lease ran out is failed by the claim at max_attempts, never claimed past it") {
    if (!h.honours_max_attempts()) return;
    auto ids = h.seed(2);
    auto s = h.open();
    const auto limited = [&](const std::string& by) { return claim(*s, claim_request{2, by, m, 0ms, 2}); };
    // Each claim's worker dies holding the lease: it runs out with no outcome written.
    auto first = limited("w1");
    REQUIRE(first.size() == 2);
    CHECK(first[0].attempts == 1);
    CHECK(complete(*s, first[1], R"({"n":1})").applied == 1);  // the other one is done
    h.let_time_pass(2 * m);
    auto second = limited("w2");
    REQUIRE(second.size() == 1);
    CHECK(second[0].id == first[0].id);
    CHECK(second[0].attempts == 2);
    h.let_time_pass(2 * m);
    // A third claim would count a third attempt: the item is failed instead.
    CHECK(limited("w3").empty());
    CHECK(limited("w4").empty());
    auto st = run_sync(s->stats());
    CHECK(st.failed == 1);
    CHECK(st.done == 1);
    CHECK(st.pending + st.leased_live + st.leased_expired == 0);
    CHECK_FALSE(h.target_of(first[0].id).has_value());
  }

  SECTION("a write for an id the store never handed out is a lost lease, never an error") {
    auto ids = h.seed(1);
    auto s = h.open();
    auto a = claim(*s, req(1, "A", lease, grace));
    REQUIRE(a.size() == 1);
    // Text no key of this store reads as, keys of other stores' kinds, and one that is SQL.
    for (const std::string odd : {"no-such-item", "-5", "007", "9223372036854775808", "'; DROP TABLE jobs; --",
                                  "0b7d6c1e-4b7a-4d2e-9f3c-1a2b3c4d5e6f", ""}) {
      INFO("id '" << odd << "'");
      const lease_ref ref{odd, "A", a[0].token};
      const auto c = run_sync(s->complete({completion{ref, "{}"}}));
      CHECK(c.applied == 0);
      CHECK(c.lost == std::vector<std::string>{odd});
      CHECK(run_sync(s->renew({renewal{ref}}, lease)).lost.size() == 1);
      CHECK(run_sync(s->release({release_item{ref, std::chrono::milliseconds(0), "", 0}})).applied == 0);
      CHECK(run_sync(s->fail({failure{ref, "x", 0}})).applied == 0);
    }
    CHECK(complete(*s, a[0], R"({"ok":true})").applied == 1);  // the real one, untouched by all that
  }

  SECTION("a row the store refuses to complete is refused alone, marking or deleting, and its batch lands without it") {
    for (const bool deleting : {false, true}) {
      auto s = deleting ? h.open_deleting() : h.open();
      if (!s) continue;  // this store can't delete what it completes
      INFO((deleting ? "--on-done delete" : "--on-done mark"));
      auto ids = h.seed(3);
      auto got = claim(*s, req(3, "A", lease, grace));
      REQUIRE(got.size() == 3);
      if (!h.refuse_completion_of(got[1].id)) return;  // no constraints or triggers here
      std::vector<completion> batch;
      for (const auto& j : got) batch.push_back(completion{j.ref(), R"({"n":1})"});
      // The store names the row (or refuses the batch for it: the engine then splits it), and
      // never takes the refusal for an outage.
      bool refused = false;
      try {
        const auto r = run_sync(s->complete(batch));
        refused = r.refused.size() == 1 && r.refused[0].first == got[1].id;
        CHECK(r.applied + r.refused.size() == 3);
      } catch (const store_refused&) {
        refused = true;
      }
      CHECK(refused);
      const auto rest = run_sync(s->complete({batch[0], batch[2]}));
      CHECK(rest.applied == 2);
      CHECK(rest.lost.empty());
      const auto alone = [&] {
        try {
          return run_sync(s->complete({batch[1]})).refused.size() == 1;
        } catch (const store_refused&) {
          return true;
        }
      }();
      CHECK(alone);
      // Its lease still holds: its failure is recorded.
      CHECK(run_sync(s->fail({failure{got[1].ref(), "refused by the store", 0}})).applied == 1);
    }
  }

  SECTION("stats count every state once") {
    auto ids = h.seed(5);
    auto s = h.open();
    auto a = claim(*s, req(3, "A", lease, grace));
    REQUIRE(a.size() == 3);
    CHECK(complete(*s, a[0], R"({"n":0})").applied == 1);
    CHECK(run_sync(s->fail({failure{a[1].ref(), "bad", 0}})).applied == 1);
    auto st = run_sync(s->stats());
    CHECK(st.done == 1);
    CHECK(st.failed == 1);
    CHECK(st.leased_live == 1);
    CHECK(st.pending == 2);
    CHECK(st.total() == 5);
    CHECK_FALSE(st.drained());
  }
}

}  // namespace dibs::test
