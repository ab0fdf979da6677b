// Answers kept in the store (--reuse-answers store; stored_answers.hpp) against the real stub, with
// a store of answers in memory standing in for dibs_answers: the next run (another process, with a
// cache of its own) asks the API nothing for an address a run before already paid for; a stale
// answer is not used; a store that fails costs a lookup, never an item, and is then left alone.
#include "support/eventually.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include "adapters/http/reuse/answer_reuse.hpp"
#include <dibs/http/http_processor.hpp>
#include "adapters/http/reuse/stored_answers.hpp"
#include <dibs/stores/memory_store.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <stdexcept>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
// dibs_answers in memory. `age` is how old every kept answer looks (no clock to wait for).
struct answers_in_memory final : answer_store {
  std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) override {
    std::lock_guard lock(mutex);
    ++finds;
    asked_ttl = ttl;
    if (failing) throw std::runtime_error("the database went away");
    auto it = kept.find(k.digest);
    if (it == kept.end() || age >= ttl) return std::nullopt;  // what dibs_answers' own query does
    return kept_answer{it->second, age};
  }
  void keep(const std::vector<std::pair<answer_key, std::string>>& answers) override {
    std::lock_guard lock(mutex);
    ++keeps;
    if (failing) throw std::runtime_error("the database went away");
    for (const auto& [k, answer] : answers) {
      kept[k.digest] = answer;
      requests[k.digest] = k.request;
    }
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return kept.size();
  }
  std::mutex mutex;
  std::map<std::string, std::string> kept, requests;
  std::chrono::milliseconds age{0};
  bool failing = false;
  int finds = 0;
  int keeps = 0;                           // calls: each a batch
  std::chrono::milliseconds asked_ttl{0};  // what the run asked the store to honour
};

// One process's run over `st` through the stub, with its own answer cache and answers kept by
// `stored`, on `shards` shards of `concurrency` pipelines in all.
run_summary run_through(const stub::ipapi_stub& api, std::shared_ptr<memory_store> st,
                        std::shared_ptr<http::stored_answers> stored, std::size_t shards, std::size_t concurrency,
                        bool no_data_fails = false) {
  auto reuse = std::make_shared<http::answer_reuse>(http::answer_cache_limits{});
  reuse->store_in(std::move(stored));
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  p.no_data_fails = no_data_fails;
  p.reuse = reuse;
  engine_config cfg;
  cfg.shards = shards;
  cfg.concurrency = concurrency;
  cfg.claim_batch = 8;
  engine e(cfg, st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  return e.summary();
}

// The same over `docs` documents drawn from `distinct` addresses, answers kept in `kept`.
run_summary run_once(const stub::ipapi_stub& api, std::shared_ptr<answers_in_memory> kept, std::size_t docs,
                     std::size_t distinct, std::shared_ptr<memory_store>* store_out = nullptr) {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(docs, 23, distinct);
  if (store_out) *store_out = st;
  return run_through(api, st, std::make_shared<http::stored_answers>(kept, std::chrono::hours(1)), 2, 32);
}
}  // namespace

TEST_CASE("the next run takes the answers a run before kept in the store: no request for those addresses",
          "[reuse][stored-answers]") {
  stub::ipapi_stub api(stub::stub_options::loopback(2ms));
  api.start();
  auto kept = std::make_shared<answers_in_memory>();
  const auto first = run_once(api, kept, 120, 12);
  CHECK(first.completed == 120);
  CHECK(first.answer_calls == api.requests());
  CHECK(first.answers_from_store == 0);
  REQUIRE(test::eventually([&] { return kept->size() == api.requests(); }));  // keeps are queued
  for (const auto& [digest, request] : kept->requests) CHECK(request.rfind("GET http://127.0.0.1:", 0) == 0);

  const auto served = api.requests();
  std::shared_ptr<memory_store> st;
  const auto second = run_once(api, kept, 120, 12, &st);
  CHECK(second.completed == 120);
  CHECK(api.requests() == served);  // the API was asked nothing
  CHECK(second.answer_calls == 0);
  CHECK(second.answers_from_store > 0);
  CHECK(second.answers_reused + second.answers_joined == 120);
  for (const auto& it : st->snapshot()) {
    REQUIRE(it.target_json);
    CHECK(*it.target_json == stub::answer_for(it.source.value));  // each its own address's answer
  }
}

TEST_CASE("an answer kept longer ago than --answer-ttl is not used: the API is asked again", "[reuse][stored-answers]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto kept = std::make_shared<answers_in_memory>();
  run_once(api, kept, 30, 3);
  REQUIRE(test::eventually([&] { return kept->size() == 3; }));
  const auto served = api.requests();
  kept->age = std::chrono::hours(2);  // the runs keep them for 1 h
  const auto again = run_once(api, kept, 30, 3);
  CHECK(again.completed == 30);
  CHECK(kept->asked_ttl == std::chrono::hours(1));  // the store is asked with the run's --answer-ttl
  CHECK(again.answers_from_store == 0);
  CHECK(api.requests() == served + 3);
}

TEST_CASE("a store that fails costs a lookup, never an item, and is then left alone for a while",
          "[reuse][stored-answers]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto kept = std::make_shared<answers_in_memory>();
  kept->failing = true;
  http::stored_answer_limits limits;
  limits.pause_after_error = std::chrono::hours(1);
  auto stored = std::make_shared<http::stored_answers>(kept, std::chrono::hours(1), limits);
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(40, 5, 10);
  const auto s = run_through(api, st, stored, 1, 1);  // one lookup at a time: the first failure is the only one
  CHECK(s.completed == 40);
  CHECK(s.failed == 0);
  CHECK(kept->finds == 1);  // the first failure rests the store: no lookup, no keep after it
  CHECK(kept->keeps == 0);
  CHECK(stored->figures().errors == 1);
  CHECK(stored->figures().kept == 0);
  CHECK(stored->figures().missed == s.answer_calls);
}

TEST_CASE("an answer over the stored size bound is not kept", "[reuse][stored-answers]") {
  auto kept = std::make_shared<answers_in_memory>();
  http::stored_answers stored(kept, std::chrono::hours(1));
  stored.keep(http::stored_answer_key("GET http://api/one"), std::string(http::stored_answers::max_answer_bytes + 1, 'x'));
  stored.keep(http::stored_answer_key("GET http://api/two"), "{\"ok\":1}");
  REQUIRE(test::eventually([&] { return stored.figures().kept == 1; }));
  CHECK(stored.figures().dropped == 1);
  CHECK(kept->size() == 1);
}

TEST_CASE("a keep while the store rests is dropped at once, never queued nor sent", "[reuse][stored-answers]") {
  auto kept = std::make_shared<answers_in_memory>();
  kept->failing = true;
  http::stored_answer_limits limits;
  limits.pause_after_error = std::chrono::hours(1);
  http::stored_answers stored(kept, std::chrono::hours(1), limits);
  stored.keep(http::stored_answer_key("GET http://api/one"), "{\"ok\":1}");  // fails in the store: the store rests
  REQUIRE(test::eventually(
      [&] { return stored.figures().errors == 1 && stored.figures().dropped == 1 && stored.queued_keeps() == 0; }));
  stored.keep(http::stored_answer_key("GET http://api/two"), "{\"ok\":2}");  // refused at once: it rests
  CHECK(stored.figures().dropped == 2);
  CHECK(stored.queued_keeps() == 0);
  std::lock_guard lock(kept->mutex);
  CHECK(kept->keeps == 1);  // only the first reached the store
}

TEST_CASE("a request's record is its SHA-256, and its query (which may hold an API key) is not kept",
          "[reuse][stored-answers]") {
  const auto k = http::stored_answer_key("GET http://api:80/json/8.8.8.8?key=s3cret&fields=all");
  CHECK(k.digest.size() == 64);
  CHECK(k.digest != http::stored_answer_key("GET http://api:80/json/8.8.8.8?key=s3cret&fields=some").digest);
  CHECK(k.request == "GET http://api:80/json/8.8.8.8?...");
  CHECK(http::stored_answer_key("GET http://api:80/json/1.1.1.1").request == "GET http://api:80/json/1.1.1.1");
}

TEST_CASE("an answer taken from the store lives in the process's cache only as long as its age allows",
          "[reuse][stored-answers]") {
  http::answer_cache_limits limits;
  limits.ttl = std::chrono::hours(1);
  http::answer_reuse reuse(limits);
  const auto o = outcome::done("{\"ok\":1}");
  net::io_context ioc;
  REQUIRE(reuse.begin("fresh", ioc.get_executor()).leads());
  reuse.finish("fresh", &o, http::answer_cache::clock::now() - std::chrono::minutes(10));
  CHECK(reuse.begin("fresh", ioc.get_executor()).cached);
  REQUIRE(reuse.begin("old", ioc.get_executor()).leads());
  reuse.finish("old", &o, http::answer_cache::clock::now() - std::chrono::minutes(61));  // kept 61 min ago
  CHECK(reuse.begin("old", ioc.get_executor()).leads());  // not served again from the cache
  reuse.finish("old", nullptr);
}

TEST_CASE("a stored answer this run would not accept is not used: the API is asked", "[reuse][stored-answers]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto kept = std::make_shared<answers_in_memory>();
  // What a run with --no-status-check kept: ip-api's failure for the address, as an answer; this
  // run (--no-data-fails) would fail that answer, so it asks the API.
  // The request's identity (request_builder.hpp) of a GET with no header nor body.
  const auto key = "GET http://127.0.0.1:" + std::to_string(api.port()) + "/json/8.8.8.8";
  kept->keep({{http::stored_answer_key(key), "{\"status\":\"fail\",\"message\":\"private range\"}"}});
  auto st = std::make_shared<memory_store>();
  st->add(std::string("8.8.8.8"));
  const auto s = run_through(api, st, std::make_shared<http::stored_answers>(kept, std::chrono::hours(1)), 1, 1, true);
  CHECK(s.completed == 1);
  CHECK(s.answers_from_store == 0);
  CHECK(api.requests() == 1);
  CHECK(*st->snapshot().at(0).target_json == stub::answer_for("8.8.8.8"));
}

TEST_CASE("answers queued while a batch is written go out together in the next one", "[reuse][stored-answers]") {
  auto kept = std::make_shared<answers_in_memory>();
  http::stored_answers stored(kept, std::chrono::hours(1));
  std::unique_lock hold(kept->mutex);  // the first write waits here, the rest queue behind it
  for (int i = 0; i < 300; ++i)
    stored.keep(http::stored_answer_key("GET http://api/" + std::to_string(i)), "{\"n\":" + std::to_string(i) + "}");
  stored.keep(http::stored_answer_key("GET http://api/7"), "{\"n\":\"seven again\"}");  // the same request: the last answer wins
  hold.unlock();
  REQUIRE(test::eventually([&] { return stored.queued_keeps() == 0 && stored.figures().kept + stored.figures().dropped == 301; }));
  CHECK(kept->size() == 300);
  CHECK(kept->keeps <= 2);  // the first answer alone, then the other 299 (and the repeat) in one
  std::lock_guard lock(kept->mutex);
  CHECK(kept->kept[http::stored_answer_key("GET http://api/7").digest] == "{\"n\":\"seven again\"}");
}
