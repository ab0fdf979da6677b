// A budget in money (spend_budget.hpp): dollars parsed, a request takes the most it can cost and
// its answer gives back what it did not, never past the budget across processes; and what a
// request can cost and an answer says it cost (spend_charge.hpp).
#include "adapters/http/budget/spend_budget.hpp"
#include "adapters/http/processor/spend_charge.hpp"

#include "engine/src/budget_store.hpp"

#include "support/run_sync.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <mutex>

using namespace dibs;
using namespace dibs::http;

namespace {
// The store's dibs_budget in memory: one count a key, taken never past the limit.
struct money_store : budget_store {
  std::mutex m;
  std::map<std::string, std::uint64_t> used;
  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override {
    std::lock_guard lock(m);
    budget_take t;
    t.granted = budget_grant(used[key], want, limit);
    used[key] += t.granted;
    t.used = used[key];
    return t;
  }
  void give_back(const std::string& key, std::uint64_t n) override {
    std::lock_guard lock(m);
    used[key] -= std::min(n, used[key]);
  }
  std::vector<budget_record> records() override { return {}; }
  std::uint64_t of(const std::string& key) {
    std::lock_guard lock(m);
    return used[key];
  }
};

// A take on the budget's own thread: after every give-back posted before it.
bool take_in_order(spend_budget& b, std::uint64_t micro) { return test::run_sync(b.take(micro)); }

std::chrono::system_clock::time_point at(int day, int hour) {
  // 2026-11-<day> <hour>:00 UTC
  std::tm tm{};
  tm.tm_year = 126;
  tm.tm_mon = 10;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  return std::chrono::system_clock::from_time_t(::timegm(&tm));
}
}  // namespace

TEST_CASE("a budget in money is dollars a day or a month, in millionths", "[budget][money]") {
  CHECK(parse_money_budget("50USD/day")->calls == 50'000'000);
  CHECK(parse_money_budget("50 usd/day")->span == budget_span::day);
  CHECK(parse_money_budget("$12.50/month")->calls == 12'500'000);
  CHECK(parse_money_budget("0.25USD/mo")->span == budget_span::month);
  CHECK_FALSE(parse_money_budget("100000/day"));  // calls
  CHECK_FALSE(parse_money_budget("50EUR/day"));
  CHECK_FALSE(parse_money_budget("0USD/day"));
  CHECK_FALSE(parse_money_budget("-5USD/day"));
  CHECK_FALSE(parse_money_budget("50USD/week"));
  CHECK(dollars_text(12'500'000) == "$12.50");
  CHECK(dollars_text(1'234) == "$0.001234");
}

TEST_CASE("a request takes the most it can cost; its answer gives back what it did not; no room: not sent, spent",
          "[budget][money]") {
  auto store = std::make_shared<money_store>();
  auto now = at(29, 12);
  spend_budget b({1'000, budget_span::day}, "budget 0.001USD/day", store, "http://llm:80", [&] { return now; });
  const auto key = b.key();
  CHECK(key == "http://llm:80 USD day 2026-11-29");
  CHECK(b.take_blocking(400));
  CHECK(b.take_blocking(400));
  CHECK(store->of(key) == 800);
  CHECK_FALSE(b.take_blocking(400));  // 200 left: a part would let the call pass the budget
  CHECK(b.spent());
  CHECK(store->of(key) == 800);  // the part granted went back
  b.settle(400, 150);  // cost 150 of its 400
  b.settle(400, std::nullopt);  // unknown: stands
  // The give-back runs on the budget's thread: a take after it (the same thread, in order) sees it.
  CHECK(take_in_order(b, 1));
  CHECK(store->of(key) == 800 - 250 + 1);
  // A new day: its own record, room again.
  now = at(30, 0);
  CHECK(b.take_blocking(400));
  CHECK(store->of("http://llm:80 USD day 2026-11-30") == 400);
  CHECK_FALSE(b.spent());
}

TEST_CASE("two processes on one budget never take past it between them", "[budget][money]") {
  auto store = std::make_shared<money_store>();
  spend_budget a({10'000, budget_span::day}, "budget", store, "http://llm:80"), c({10'000, budget_span::day}, "budget", store, "http://llm:80");
  int sent = 0;
  for (int i = 0; i < 30; ++i) {
    if (a.take_blocking(700)) ++sent;
    if (c.take_blocking(700)) ++sent;
  }
  CHECK(sent == 14);  // 14 x 700 = 9,800 of 10,000
  CHECK(store->of(a.key()) == 9'800);
  CHECK(a.spent());
  CHECK(c.spent());
}

TEST_CASE("an answer that cost more than its request could is counted after the fact, and spends the budget", "[budget][money]") {
  auto store = std::make_shared<money_store>();
  spend_budget b({1'000, budget_span::day}, "budget", store, "http://llm:80");
  CHECK(b.take_blocking(300));
  b.settle(300, 1'200);  // a body without max_tokens: 900 beyond, 700 of it in the budget
  CHECK_FALSE(take_in_order(b, 1));  // after the excess was counted (same thread, in order): nothing left
  CHECK(b.spent());
  CHECK(store->of(b.key()) == 1'000);
}

TEST_CASE("a request's most: its prompt's estimate at the input price, its max_tokens at the output price", "[budget][money]") {
  token_estimator e;  // 4 bytes a token before any answer
  processor_options::token_prices p{0.15e-6, 0.60e-6};
  const std::string body = R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]})";
  const auto prompt = static_cast<double>((body.size() + 3) / 4);
  CHECK(most_cost(e, body, p) == static_cast<std::uint64_t>(std::ceil(prompt * 0.15)) + 60);
  response ok;
  ok.status = 200;
  ok.body = R"({"usage":{"prompt_tokens":1000,"completion_tokens":100}})";
  CHECK(answer_cost(ok, p) == std::optional<std::uint64_t>(150 + 60));
  response refused;
  refused.status = 429;
  CHECK(answer_cost(refused, p) == std::optional<std::uint64_t>(0));
  response silent;
  silent.status = 200;
  silent.body = R"({"choices":[]})";
  CHECK_FALSE(answer_cost(silent, p));
}
