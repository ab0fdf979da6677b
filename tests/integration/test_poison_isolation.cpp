// The engine's side of "one bad item costs that item, never the run", on a memory store wrapped
// to refuse or to be unreachable the way a SQL server is: a refused statement refuses the whole
// batch; an unreachable store fails every write until it is back. (The same on a real MariaDB:
// tests/mysql/test_mysql_poison.cpp.)
#include "support/engine_configs.hpp"

#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>
#include "engine/src/reason_text.hpp"

#include "engine/src/chunked_write.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// Refuses, whole, any completion batch holding a poisoned item and any failure batch with a
// reason over 300 bytes; while `down`, throws on every write like a lost connection.
class moody_store final : public store {
 public:
  explicit moody_store(std::shared_ptr<memory_store> m) : mem(std::move(m)) {}

  awaitable<std::vector<job>> claim(claim_request r) override { co_return co_await mem->claim(std::move(r)); }
  awaitable<write_result> complete(std::vector<completion> b) override {
    ++complete_calls;
    if (down) throw std::runtime_error("connection lost");
    for (const auto& x : b)
      if (poisoned.count(x.ref.id)) throw store_refused("value too deep for the column");
    co_return co_await mem->complete(std::move(b));
  }
  awaitable<renew_result> renew(std::vector<renewal> b, millis lease) override { co_return co_await mem->renew(std::move(b), lease); }
  awaitable<write_result> release(std::vector<release_item> b) override {
    if (down) throw std::runtime_error("connection lost");
    co_return co_await mem->release(std::move(b));
  }
  awaitable<write_result> fail(std::vector<failure> b) override {
    if (down) throw std::runtime_error("connection lost");
    for (const auto& x : b)
      if (x.reason.size() > 300) throw store_refused("Data too long for column 'error'");
    co_return co_await mem->fail(std::move(b));
  }
  awaitable<store_stats> stats() override { co_return co_await mem->stats(); }
  std::string describe() const override { return "moody"; }

  std::shared_ptr<memory_store> mem;
  std::set<std::string> poisoned;
  std::atomic<bool> down{false};
  std::atomic<int> complete_calls{0};
};

class instant_processor final : public processor {
 public:
  awaitable<outcome> process(job j) override {
    if (j.fields.at(0).value == "long-reason") co_return outcome::fail("no data: " + std::string(50'000, 'x'));
    co_return outcome::done("{\"ip\":\"" + j.fields.at(0).value + "\"}");
  }
};

engine_config poison_config() { return test::config_of(1, 40, 25, 60s); }

// Runs the engine until it ends by itself (true) or `limit` passes (false; then it is stopped).
bool run_to_end(engine& e, std::chrono::seconds limit = 60s) {
  std::promise<void> ended;
  e.on_finished([&] { ended.set_value(); });
  e.start();
  const bool by_itself = ended.get_future().wait_for(limit) == std::future_status::ready;
  if (!by_itself) e.stop_now();
  e.wait();
  return by_itself;
}
}  // namespace

TEST_CASE("a refused answer fails alone: the engine splits the refused batch and everything else lands", "[engine][poison]") {
  auto mem = std::make_shared<memory_store>();
  for (int i = 0; i < 500; ++i) mem->add("10.0.0." + std::to_string(i));
  auto st = std::make_shared<moody_store>(mem);
  st->poisoned = {"7", "123", "124", "400"};
  engine e(poison_config(), st, [](const shard_info&) { return std::make_unique<instant_processor>(); });
  REQUIRE(run_to_end(e));

  CHECK(e.summary().completed == 496);
  CHECK(e.summary().failed == 4);
  for (const auto& it : mem->snapshot()) {
    CHECK_FALSE(it.lease.has_value());
    if (st->poisoned.count(it.id)) {
      REQUIRE(it.failed.has_value());
      CHECK(it.failed->reason == "the store refused the answer: value too deep for the column");
      CHECK(it.writes == 0);
    } else {
      CHECK(it.writes == 1);
      CHECK(it.write_attempts == 1);
    }
  }
  // Bisection, not one write per item: about 20 batches of 25 plus a few splits per poisoned one.
  CHECK(st->complete_calls < 80);
}

TEST_CASE("a failure reason the store refuses is recorded shortened", "[engine][poison]") {
  auto mem = std::make_shared<memory_store>();
  for (int i = 0; i < 30; ++i) mem->add(i == 5 ? "long-reason" : "10.0.1." + std::to_string(i));
  auto st = std::make_shared<moody_store>(mem);
  engine e(poison_config(), st, [](const shard_info&) { return std::make_unique<instant_processor>(); });
  REQUIRE(run_to_end(e));
  CHECK(e.summary().completed == 29);
  CHECK(e.summary().failed == 1);
  const auto it = mem->get("6");
  REQUIRE(it);
  REQUIRE(it->failed.has_value());
  CHECK(it->failed->reason.size() <= 200);
  CHECK_THAT(it->failed->reason, Catch::StartsWith("no data: xxxx") && Catch::EndsWith("bytes cut)"));
}

TEST_CASE("while the store can't be written, claiming stops at the bound, and nothing is lost once it is back", "[engine][poison]") {
  auto mem = std::make_shared<memory_store>();
  for (int i = 0; i < 2000; ++i) mem->add("10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256));
  auto st = std::make_shared<moody_store>(mem);
  st->down = true;
  auto cfg = poison_config();
  engine e(cfg, st, [](const shard_info&) { return std::make_unique<instant_processor>(); });
  std::promise<void> ended;
  e.on_finished([&] { ended.set_value(); });
  e.start();
  // Wait for the flusher to have retried a few times (a state of the store, not a time).
  for (int i = 0; i < 3000 && st->complete_calls < 5; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(st->complete_calls >= 5);
  // At most the bound (concurrency + claim batch) waits unwritten, plus what was in flight and
  // prefetched when it was reached.
  const auto claimed = load(e.figures().claimed);
  CHECK(claimed <= (cfg.concurrency + cfg.claim_batch) + cfg.concurrency + 2 * cfg.claim_batch);
  CHECK(load(e.figures().completed) == 0);
  st->down = false;
  REQUIRE(ended.get_future().wait_for(60s) == std::future_status::ready);
  e.wait();
  CHECK(e.summary().completed == 2000);
  for (const auto& it : mem->snapshot()) {
    CHECK(it.writes == 1);
    CHECK_FALSE(it.lease.has_value());
  }
}

TEST_CASE("reasons are bounded on a character boundary", "[engine][poison]") {
  CHECK(bounded_reason("short") == "short");
  const auto r = bounded_reason(std::string(5000, 'a'));
  CHECK(r.size() <= max_reason_bytes);
  const auto kept = r.substr(0, r.find(" ... ("));
  CHECK(kept == std::string(kept.size(), 'a'));
  CHECK(r == kept + " ... (" + std::to_string(5000 - kept.size()) + " bytes cut)");
  // "é" is two bytes: a cut never splits it.
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";
  const auto cut = bounded_reason(accents, 101);
  CHECK(cut.size() <= 101);
  const auto head = cut.substr(0, cut.find(" ... ("));
  CHECK(head.size() % 2 == 0);
}

TEST_CASE("outcomes go out in chunks capped in items and bytes", "[engine][poison]") {
  std::vector<completion> items;
  for (int i = 0; i < 10; ++i) items.push_back(completion{lease_ref{std::to_string(i), "w", 1}, std::string(i == 4 ? 5000 : 100, 'x')});
  auto chunks = split_chunks(items, chunk_limits{4, 1000});
  std::vector<std::size_t> sizes;
  for (const auto& c : chunks) sizes.push_back(c.size());
  // 0-3 (items cap); 4 alone is over the byte cap and stands alone; 5-8; 9.
  CHECK(sizes == std::vector<std::size_t>{4, 1, 4, 1});
  CHECK(chunks[1].front().ref.id == "4");
}

TEST_CASE("the engine says whether it ended because nothing was left or because it was stopped", "[engine]") {
  {
    auto mem = std::make_shared<memory_store>();
    for (int i = 0; i < 50; ++i) mem->add("10.2.0." + std::to_string(i));
    engine e(poison_config(), mem, [](const shard_info&) { return std::make_unique<instant_processor>(); });
    REQUIRE(run_to_end(e));
    CHECK(e.drained());
  }
  {
    auto mem = std::make_shared<memory_store>();
    for (int i = 0; i < 50; ++i) mem->add("10.3.0." + std::to_string(i));
    auto st = std::make_shared<moody_store>(mem);
    st->down = true;  // nothing can be written: the run can't end by itself
    engine e(poison_config(), st, [](const shard_info&) { return std::make_unique<instant_processor>(); });
    e.start();
    for (int i = 0; i < 3000 && st->complete_calls < 1; ++i) std::this_thread::sleep_for(10ms);
    e.stop_now();
    e.wait();
    CHECK_FALSE(e.drained());
  }
}
