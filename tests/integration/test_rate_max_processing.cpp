// --rate together with --max-processing: the time a call waits for its rate slot is not
// processing time, and waiters that are cancelled give their slot back.
#include <dibs/http/batch_processor.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/stores/memory_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
engine_config limited_config() {
  engine_config c;
  c.shards = 2;
  c.concurrency = 60;  // 60 calls wait for 20 slots a second: most wait far longer than 1 s
  c.claim_batch = 20;
  c.max_processing = 1s;
  c.max_attempts = 3;
  c.lease = 60s;
  return c;
}
}  // namespace

TEST_CASE("with --rate and --max-processing, calls waiting for their slot are not abandoned", "[rate][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(60, 31);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  p.limiter = std::make_shared<http::rate_limiter>(20.0, 1.0);
  engine e(limited_config(), st, http::make_http_processor_factory(p));
  e.start();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.completed == 60);
  CHECK(sum.failed == 0);
  CHECK(sum.retries == 0);       // no call was abandoned and sent again
  CHECK(api.requests() == 60);
  for (const auto& it : st->snapshot()) CHECK(it.target_json == stub::answer_for(it.source.value));
}

TEST_CASE("in batch mode too, waiting for the rate slot is not processing time", "[rate][batch][e2e]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(60, 32);
  http::batch_processor_options b;
  b.call.url = http::url_template::parse(api.base_url() + "/batch");
  b.call.limiter = std::make_shared<http::rate_limiter>(2.0, 1.0);  // a batch every 500 ms
  b.batch_size = 5;  // 12 batches: 6 s of waiting for slots, far past --max-processing
  auto cfg = limited_config();
  cfg.shards = 1;
  engine e(cfg, st, http::make_batch_processor_factory(b));
  e.start();
  e.wait();
  const auto sum = e.summary();
  CHECK(sum.completed == 60);
  CHECK(sum.failed == 0);
  CHECK(sum.retries == 0);  // no batch was abandoned and sent again
}
