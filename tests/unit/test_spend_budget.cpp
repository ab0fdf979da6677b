// A budget in money (spend_budget.hpp): dollars parsed, a request takes the most it can cost and
// its answer gives back what it did not, never past the budget across processes; and what a
// request can cost and an answer says it cost (spend_charge.hpp).
#include "adapters/http/budget/spend_budget.hpp"
#include "adapters/http/processor/spend_charge.hpp"

#include "engine/src/budget_store.hpp"

#include "support/run_sync.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <stdexcept>

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
std::optional<spend_ticket> take(spend_budget& b, std::uint64_t micro) { return test::run_sync(b.take(micro)); }

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
  CHECK_FALSE(parse_money_budget("0.0000001USD/day"));  // rounds to nothing
  CHECK_FALSE(parse_money_budget("-5USD/day"));
  CHECK_FALSE(parse_money_budget("50USD/week"));
  CHECK(dollars_text(12'500'000) == "$12.50");
  CHECK(dollars_text(1'234) == "$0.001234");
}

TEST_CASE("a request takes the most it can cost, and its answer gives back what it did not, to the day it was taken from",
          "[budget][money]") {
  auto store = std::make_shared<money_store>();
  auto now = at(29, 23);
  spend_budget b({1'000, budget_span::day}, "budget 0.001USD/day", store, "http://llm:80", [&] { return now; });
  const auto key = b.key();
  CHECK(key == "http://llm:80 USD day 2026-11-29");
  auto first = take(b, 400), second = take(b, 400);
  REQUIRE(first);
  REQUIRE(second);
  CHECK(store->of(key) == 800);
  CHECK(b.in_flight() == 2);
  // Midnight passes while they are in flight: a new day's take goes to its own record...
  now = at(30, 0);
  auto third = take(b, 300);
  REQUIRE(third);
  CHECK(store->of("http://llm:80 USD day 2026-11-30") == 300);
  // ... and the answers give back to the day they were taken from.
  first->settle(150);                 // cost 150 of its 400
  second->settle(std::nullopt);       // unknown: stands
  third->settle(100);
  const auto probe = take(b, 1);      // after the give-backs (the budget's one thread, in order)
  CHECK(probe);
  CHECK(store->of(key) == 800 - 250);
  CHECK(store->of("http://llm:80 USD day 2026-11-30") == 100 + 1);
}

TEST_CASE("a ticket dropped before its request went gives everything back, one dropped after it stands", "[budget][money]") {
  auto store = std::make_shared<money_store>();
  spend_budget b({1'000, budget_span::day}, "budget", store, "http://llm:80");
  {
    auto t = take(b, 400);  // cancelled while it waited for a connection: never sent
    REQUIRE(t);
  }
  {
    auto t = take(b, 300);
    REQUIRE(t);
    t->sent();  // written, then cancelled: the API may have charged it
  }
  const auto probe = take(b, 1);
  CHECK(probe);
  CHECK(store->of(b.key()) == 300 + 1);
  CHECK(b.in_flight() == 1);
}

TEST_CASE("no room while calls are in flight: the request waits for their answers, and with none in flight it is spent, not sent",
          "[budget][money]") {
  auto store = std::make_shared<money_store>();
  spend_budget b({1'000, budget_span::day}, "budget", store, "http://llm:80");
  auto held = take(b, 800);
  REQUIRE(held);
  // A request of 400 finds 200 left; the call in flight answers (it cost 100) while it waits.
  net::io_context ioc(1);
  std::optional<spend_ticket> waited;
  bool done = false;
  net::co_spawn(ioc, [&]() -> awaitable<void> {
    waited = co_await b.take(400);
    done = true;
  }, net::detached);
  net::steady_timer answer(ioc, std::chrono::milliseconds(50));
  answer.async_wait([&](const boost::system::error_code&) { held->settle(100); });
  ioc.run();
  CHECK(done);
  REQUIRE(waited);
  CHECK_FALSE(b.spent());
  CHECK(store->of(b.key()) == 100 + 400);
  waited->settle(400);
  // 500 left, nothing in flight: a request of 600 is not sent, and the budget is spent.
  CHECK_FALSE(take(b, 600));
  CHECK(b.spent());
  CHECK(store->of(b.key()) == 500);  // the part granted went back
}

TEST_CASE("two processes on one budget never take past it between them", "[budget][money]") {
  auto store = std::make_shared<money_store>();
  spend_budget a({10'000, budget_span::day}, "budget", store, "http://llm:80"), c({10'000, budget_span::day}, "budget", store, "http://llm:80");
  std::vector<spend_ticket> held;
  for (int i = 0; i < 7; ++i) {
    auto x = take(a, 700), y = take(c, 700);
    REQUIRE(x);
    REQUIRE(y);
    held.push_back(std::move(*x));
    held.push_back(std::move(*y));
  }
  for (auto& t : held) t.sent();
  CHECK(store->of(a.key()) == 9'800);
  held.clear();  // sent and dropped: they stand
  CHECK_FALSE(take(a, 700));  // 200 left, nothing in flight
  CHECK_FALSE(take(c, 700));
  CHECK(a.spent());
  CHECK(c.spent());
  CHECK(store->of(a.key()) == 9'800);
}

TEST_CASE("an answer that cost more than its request could is counted after the fact, and spends the budget", "[budget][money]") {
  auto store = std::make_shared<money_store>();
  spend_budget b({1'000, budget_span::day}, "budget", store, "http://llm:80");
  auto t = take(b, 300);
  REQUIRE(t);
  t->settle(1'200);  // a body without max_tokens: 900 beyond, 700 of it in the budget
  CHECK_FALSE(take(b, 1));  // after the excess was counted (the budget's one thread, in order): nothing left
  CHECK(b.spent());
  CHECK(store->of(b.key()) == 1'000);
}

TEST_CASE("a request's most: its prompt's estimate at the input price, its max_tokens at the output price", "[budget][money]") {
  token_estimator e;  // 4 bytes a token before any answer
  processor_options::token_prices p{0.15e-6, 0.60e-6};
  const std::string body = R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]})";
  const auto prompt = static_cast<double>((body.size() + 3) / 4);
  CHECK(most_cost(e, body.size(), max_output_tokens(body), p) == static_cast<std::uint64_t>(std::ceil(prompt * 0.15)) + 60);
  response ok;
  ok.status = 200;
  ok.body = R"({"usage":{"prompt_tokens":1000,"completion_tokens":100}})";
  CHECK(answer_cost(ok, p) == std::optional<std::uint64_t>(150 + 60));
  // Anthropic's cache, as it bills it: a write at 1.25 times the input price, a read at 0.1 times.
  response cached;
  cached.status = 200;
  cached.body = R"({"usage":{"input_tokens":300,"cache_creation_input_tokens":1000,"cache_read_input_tokens":20000,"output_tokens":100}})";
  CHECK(answer_cost(cached, p) == std::optional<std::uint64_t>(static_cast<std::uint64_t>(std::ceil((300 + 1250 + 2000) * 0.15)) + 60));
  // Written for an hour, a cache write is billed at twice the input price.
  cached.body = R"({"usage":{"input_tokens":300,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,)"
                R"("cache_creation":{"ephemeral_5m_input_tokens":600,"ephemeral_1h_input_tokens":400},"output_tokens":100}})";
  CHECK(answer_cost(cached, p) == std::optional<std::uint64_t>(static_cast<std::uint64_t>(std::ceil((300 + 600 * 1.25 + 400 * 2.0) * 0.15)) + 60));
  response refused;
  refused.status = 429;
  CHECK(answer_cost(refused, p) == std::optional<std::uint64_t>(0));
  response silent;
  silent.status = 200;
  silent.body = R"({"choices":[]})";
  CHECK_FALSE(answer_cost(silent, p));
}

TEST_CASE("a budget whose store can't be asked sends nothing, and holds the claims a second rather than loop", "[budget][money]") {
  struct down_store : budget_store {
    budget_take take(const std::string&, std::uint64_t, std::uint64_t) override { throw std::runtime_error("connection refused"); }
    void give_back(const std::string&, std::uint64_t) override {}
    std::vector<budget_record> records() override { return {}; }
  };
  spend_budget b({1'000, budget_span::day}, "budget", std::make_shared<down_store>(), "http://llm:80");
  CHECK_FALSE(take(b, 10));
  CHECK_FALSE(b.spent());  // not spent: out of reach, for now
  CHECK(b.out_of_reach());
}

TEST_CASE("a request that could cost more than the whole budget is never sent, and the budget says it is spent once", "[budget][money]") {
  auto store = std::make_shared<money_store>();
  auto b = std::make_shared<spend_budget>(budget_limit{1'000, budget_span::day}, "budget 0.001USD/day", store, "http://llm:80");
  CHECK(never_fits({b}, 1'001).find("more than the whole of budget 0.001USD/day ($0.001)") != std::string::npos);
  CHECK(never_fits({b}, 1'000).empty());
  int told = 0;
  b->on_spent([&] { ++told; });
  CHECK(take(*b, 900));  // dropped at once: given back
  CHECK(take(*b, 1'000));  // the whole budget fits once the 900 is back (given back first, on the budget's thread)
  CHECK(told == 0);
  auto held = take(*b, 600);
  REQUIRE(held);
  held->sent();
  held.reset();  // sent: stands
  CHECK_FALSE(take(*b, 600));  // 400 left, nothing in flight: spent, said once
  CHECK_FALSE(take(*b, 600));
  CHECK(told == 1);
}
