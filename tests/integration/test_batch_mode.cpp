// Batch lookups end to end: the engine, the batch processor and the stub's POST /batch.
#include <dibs/http/batch_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
http::batch_processor_options batch_options(const stub::ipapi_stub& api, std::size_t size) {
  http::batch_processor_options b;
  b.call.url = http::url_template::parse(api.base_url() + "/batch?fields=status,message,country,city,query", "--batch-url");
  b.call.backoff_base = 1ms;
  b.call.backoff_max = 5ms;
  b.batch_size = size;
  b.linger = 5ms;
  return b;
}

engine_config batch_config(std::size_t concurrency, int max_attempts) {
  engine_config c;
  c.shards = 2;
  c.concurrency = concurrency;
  c.claim_batch = 50;
  c.max_attempts = max_attempts;
  c.grace = 0ms;
  return c;
}
}  // namespace

TEST_CASE("batch mode maps answers to items by position, with per-item failures and batch errors mixed in", "[batch][e2e]") {
  auto so = stub::stub_options::loopback();
  so.error_rate = 0.2;  // whole batches answered 500: every item in them retried
  so.garbage_rate = 0.1;
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(400, 51);
  std::vector<std::string> private_ids, odd_ids;
  for (int i = 0; i < 20; ++i) private_ids.push_back(st->add("192.168.1." + std::to_string(i + 1)));
  odd_ids.push_back(st->add(job_field{"originatingIp", job_field::state::not_string, "", "int32"}));
  odd_ids.push_back(st->add(job_field{"originatingIp", job_field::state::missing, "", ""}));

  engine e(batch_config(200, 20), st, http::make_batch_processor_factory(batch_options(api, 100)));
  e.start();
  e.wait();

  CHECK(e.summary().completed == 400);
  CHECK(e.summary().no_data == 20);  // ip-api's "private range": the answer written, counted apart
  CHECK(e.summary().failed == 2);
  for (const auto& id : private_ids) {
    auto it = st->get(id);
    CHECK_FALSE(it->failed);
    REQUIRE(it->target_json);
    CHECK_THAT(*it->target_json, Catch::Contains("\"message\":\"private range\""));
  }
  CHECK(st->get(odd_ids[0])->failed->reason == "source field 'originatingIp' is not a string (it is int32)");
  CHECK(st->get(odd_ids[1])->failed->reason == "source field 'originatingIp' is missing");
  for (const auto& it : st->snapshot())
    if (it.target_json) {
      CHECK(*it.target_json == stub::answer_for(it.source.value));  // its own answer, not a neighbour's
      CHECK(it.writes == 1);
      CHECK(it.write_attempts == 1);
    }
  CHECK(api.faults().errors > 0);
  CHECK(api.batch_requests() < 420 / 10);  // batched: far fewer requests than items
}

TEST_CASE("a batch above the API's limit is sent in parts of the most its 422 names, every item done", "[batch][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(101, 52);
  auto cfg = batch_config(101, 5);
  cfg.shards = 1;
  cfg.claim_batch = 101;
  auto b = batch_options(api, 101);
  b.linger = 2s;  // the batch fills before it is sent
  engine e(cfg, st, http::make_batch_processor_factory(b));
  e.start();
  e.wait();
  // "too many queries (at most 100)": the 101 go again as 100 and 1, no halving to find the 100.
  CHECK(e.summary().completed == 101);
  CHECK(e.summary().failed == 0);
  CHECK(api.batch_requests() == 3);
  for (const auto& it : st->snapshot()) {
    REQUIRE(it.target_json);
    CHECK(*it.target_json == stub::answer_for(it.source.value));
  }
}

TEST_CASE("batch mode: one rate-limiter slot per request, and the batches fill while they wait", "[batch][rate][e2e]") {
  auto so = stub::stub_options::loopback();
  so.record = true;
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(300, 53);
  auto b = batch_options(api, 100);
  b.call.limiter = std::make_shared<http::rate_limiter>(1.0, 1.0);  // like ip-api's 15/min, faster
  engine e(batch_config(300, 5), st, http::make_batch_processor_factory(b));
  e.start();
  e.wait();
  CHECK(e.summary().completed == 300);
  const auto times = api.served_times();
  REQUIRE(times.size() >= 3);
  // 1/s, no burst: requests 1 s apart at the client; half a second of slack for the way there.
  for (std::size_t i = 1; i < times.size(); ++i) CHECK(times[i] - times[i - 1] >= 500ms);
  CHECK(times.size() <= 6);  // waiting for a slot, a batch keeps filling: a few full batches
}

TEST_CASE("a batch that runs past --max-processing is abandoned and its items retried", "[batch][e2e]") {
  auto so = stub::stub_options::loopback();
  so.timeout_rate = 1.0;  // never answers
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(30, 54);
  auto cfg = batch_config(30, 2);
  cfg.max_processing = 200ms;
  engine e(cfg, st, http::make_batch_processor_factory(batch_options(api, 10)));
  e.start();
  e.wait();
  CHECK(e.summary().failed == 30);
  for (const auto& it : st->snapshot()) {
    REQUIRE(it.failed);
    // The leader's call was cancelled at the deadline; its members were told so, or hit their
    // own deadline first.
    const auto& why = it.failed->reason;
    const bool abandoned = why.find("abandoned after max_processing 200 ms") != std::string::npos ||
                           why.find("its batch request was cancelled") != std::string::npos;
    INFO(why);
    CHECK(abandoned);
  }
}
