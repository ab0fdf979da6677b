// The MongoDB store's client pool: every caller borrows one client at a time and never a second
// one while it holds the first. A clock refresh falls due in the middle of a stored-answer lookup
// or a shared-rate update; it used to borrow a second client there, which with every client
// borrowed that way is a deadlock. With one client in the pool (maxPoolSize=1 in the URI) and a
// refresh due at every reading, each call must still finish.
#include "support/mongo_env.hpp"

#include <adapters/stores/open_answer_store.hpp>
#include <adapters/stores/open_shared_rate.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// Runs `calls` on a thread of its own and says whether they finished within `bound`. A call
// that hangs keeps its thread (detached, holding what it uses) rather than hang the test.
bool finishes_within(std::chrono::seconds bound, std::function<void()> calls) {
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  std::thread([done, calls = std::move(calls)] {
    try {
      calls();
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  }).detach();
  if (finished.wait_for(bound) != std::future_status::ready) return false;
  finished.get();  // a call that threw fails the test with its message
  return true;
}
}  // namespace

TEST_CASE("with one pooled client and a clock refresh due at every reading, no MongoDB call waits for itself",
          "[mongo][pool][clock]") {
  mongo::mongo_options o;
  o.uri = test::with_option(test::mongodb_uri(), "maxPoolSize=1");
  o.db = "dibs_test";
  o.collection = test::unique_collection("pool");
  o.threads = 1;
  o.clock_refresh = 0s;  // every reading of the server's clock is due for a refresh
  auto s = std::make_shared<mongo::mongo_store>(o);
  mongo::drop(*s);
  REQUIRE(s->seed(2, 5) == 2);
  auto answers = open_answer_store(s);
  auto rate = open_shared_rate(s).record;
  const answer_key key{"d1e5", "GET /json/1.2.3.4"};

  std::optional<kept_answer> found;
  rate_block block;
  std::size_t claimed = 0;
  // Each call, on its own, deadlocked before the fix; 30 s is far more than they take (well under a second).
  const bool finished = finishes_within(30s, [&, s, answers, rate] {
    answers->keep({{key, R"({"status":"success"})"}});
    found = answers->find(key, 1h);
    block = rate->take_block({"http://api.test", 4, 100'000us});
    rate->pause("http://api.test", 2'000'000us);
    (void)rate->paused_for("http://api.test");
    claimed = s->claim_blocking({2, "pool-test", 60s, 1s}).size();
  });
  REQUIRE(finished);
  REQUIRE(found.has_value());
  CHECK(found->answer == R"({"status":"success"})");
  CHECK(block.granted == 4);
  CHECK(claimed == 2);
}
