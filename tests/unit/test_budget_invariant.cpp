// A budget is an invariant, not a count: the calls an API sees in a period never pass the
// budget, whatever happens in whatever order: several processes taking from one store's budget,
// claims, first calls and calls again (items run again after an outage), items that end written,
// given back, failed or refused, leases lost, a process that crashes (keeping what it took),
// probes that reserve for themselves, and midnight (a new period). Driven at random (seeded: the
// same every run) through call_budget with a store's budget in memory and a clock of the test's.
// And a spent budget always says so once nothing it holds is still reserved: the run ends.
#include "adapters/http/budget/call_budget.hpp"

#include "engine/src/budget_store.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace dibs;
using namespace dibs::http;
using sys_clock = std::chrono::system_clock;

namespace {

// The store's budget records, as every store keeps them (budget_grant never passes the limit).
class memory_budget final : public budget_store {
 public:
  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override {
    auto& used = used_[key];
    const auto granted = budget_grant(used, want, limit);
    used += granted;
    return {granted, used};
  }
  void give_back(const std::string& key, std::uint64_t n) override {
    auto& used = used_[key];
    used -= std::min(n, used);
  }
  std::vector<budget_record> records() override { return {}; }

 private:
  std::map<std::string, std::uint64_t> used_;
};

// One process's view of the store: a crashed process gives nothing back.
class process_link final : public budget_store {
 public:
  explicit process_link(std::shared_ptr<budget_store> to) : to_(std::move(to)) {}
  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override {
    return to_->take(key, want, limit);
  }
  void give_back(const std::string& key, std::uint64_t n) override {
    if (!dead) to_->give_back(key, n);
  }
  std::vector<budget_record> records() override { return {}; }
  bool dead = false;

 private:
  std::shared_ptr<budget_store> to_;
};

struct process {
  std::shared_ptr<process_link> link;
  std::unique_ptr<call_budget> budget;
  std::vector<std::pair<std::string, bool>> items;  // claimed: key, called
};

}  // namespace

TEST_CASE("calls at the API never pass the budget, through processes, crashes, outages, lost leases, refusals and midnight",
          "[budget][property]") {
  constexpr std::uint64_t limit = 40;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    auto now = sys_clock::from_time_t(1'795'910'000);  // 2026-11-28 23:13:20 UTC: midnight comes
    auto clock = [&now] { return now; };
    auto shared = std::make_shared<memory_budget>();
    std::map<std::string, std::uint64_t> at_api;  // calls the API saw, by the period they came in
    std::uint64_t next_item = 0, token = 0;
    auto start = [&]() {
      process p;
      p.link = std::make_shared<process_link>(shared);
      p.budget = std::make_unique<call_budget>(budget_limit{limit, budget_span::day}, "--budget 40/day", p.link,
                                               "http://api:80", clock);
      return p;
    };
    std::vector<process> procs;
    for (int i = 0; i < 3; ++i) procs.push_back(start());
    auto call_at_api = [&]() {
      const auto period = period_name(budget_span::day, now);
      ++at_api[period];
      REQUIRE(at_api[period] <= limit);
    };
    for (int step = 0; step < 3000; ++step) {
      auto& p = procs[pick(procs.size())];
      switch (pick(11)) {
        case 0:
        case 1: {  // a claim: the items the budget reserved for
          const auto got = p.budget->reserve_blocking(1 + pick(4));
          for (std::uint64_t i = 0; i < got; ++i)
            p.items.emplace_back(budget_item_key("item-" + std::to_string(next_item++ % 50), ++token), false);
          break;
        }
        case 2:
        case 3:
        case 4: {  // a call goes out: an item's first of its claim, or again (after an outage)
          if (p.items.empty()) break;
          auto& it = p.items[pick(p.items.size())];
          if (p.budget->item_calls(it.first)) {
            it.second = true;
            call_at_api();
          }
          break;
        }
        case 5:
        case 6: {  // an item ends: written, given back, failed, refused then failed, or its lease lost
          if (p.items.empty()) break;
          const auto i = pick(p.items.size());
          p.budget->items_ended({p.items[i].first});
          p.items.erase(p.items.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
        case 7: {  // a probe, or the pre-flight: a call that reserves for itself
          if (p.budget->reserve_blocking(1) == 1) {
            p.budget->called();
            call_at_api();
            p.budget->ended(1);
          }
          break;
        }
        case 8: {  // time passes, now and then past midnight
          now += std::chrono::seconds(pick(4) == 0 ? 3600 : 5);
          break;
        }
        case 10: {  // a batch: one call for several claimed items (--batch-url)
          if (p.items.empty()) break;
          std::vector<std::string> keys;
          for (std::size_t n = 1 + pick(3), i = 0; i < n; ++i) keys.push_back(p.items[pick(p.items.size())].first);
          if (p.budget->batch_calls(keys)) {
            for (auto& it : p.items)
              if (std::find(keys.begin(), keys.end(), it.first) != keys.end()) it.second = true;
            call_at_api();
          }
          break;
        }
        case 9: {  // a crash: what it took stays taken; another process starts
          if (pick(4) != 0) break;
          p.link->dead = true;
          p = start();
          break;
        }
      }
    }
    // Every item ends: each process's book then holds no reservation, and a budget whose calls
    // are spent says so (before, an item whose lease was lost kept its reservation for ever: no
    // claim, no "spent", a run idle until killed).
    for (auto& p : procs) {
      for (const auto& it : p.items) p.budget->items_ended({it.first});
      p.items.clear();
    }
    for (auto& p : procs) {
      for (std::uint64_t i = 0; i <= limit + 1; ++i) {
        if (p.budget->reserve_blocking(1) == 0) break;
        const auto key = budget_item_key("last", ++token);
        if (p.budget->item_calls(key)) call_at_api();
        p.budget->items_ended({key});
      }
      CHECK(p.budget->reserve_blocking(1) == 0);
      CHECK(p.budget->spent());
    }
  }
}

TEST_CASE("a batch's one call ends its rows' reservations: the halves of a batch refused whole fit in what is left", "[budget]") {
  // 100 rows and one call to spare: the whole batch is their first call; its two halves (a batch
  // the API refused whole, halved to find the row it refuses) are further calls, each needing
  // room. The rows' reservations stood for first calls that one call made; held on, they left the
  // halves no room, and the rows went back to be claimed again and refused again.
  call_budget b(budget_limit{101, budget_span::run}, "max_calls 101");
  REQUIRE(b.reserve_blocking(100) == 100);
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) keys.push_back(budget_item_key("row" + std::to_string(i), 1));
  CHECK(b.batch_calls(keys));
  const std::vector<std::string> first(keys.begin(), keys.begin() + 50), second(keys.begin() + 50, keys.end());
  CHECK(b.batch_calls(first));
  CHECK(b.batch_calls(second));
  CHECK(b.calls() == 3);
  // The room they left is the budget's: others may be claimed into it, and the rows ending gives
  // back no reservation those others hold.
  CHECK(b.reserve_blocking(100) == 98);
  b.items_ended(keys);
  CHECK(b.reserve_blocking(1) == 0);  // 3 made, 98 reserved: 101
}
