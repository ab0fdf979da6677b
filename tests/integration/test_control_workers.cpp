// The controls for workers and live changes against a running engine: GET /workers (this
// process's shards, the store's lease holders), POST /release (a dead worker's leases freed,
// counted in /status), /concurrency, /rate, /retry, and what GET /status adds. Also the engine's
// live concurrency itself: growing starts pipelines at once, shrinking abandons nothing.
#include "support/eventually.hpp"
#include "support/memory_admin.hpp"
#include "support/raw_http.hpp"
#include "support/run_sync.hpp"

#include "adapters/control/control_json.hpp"
#include <dibs/control/control_server.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/engine.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <atomic>
#include <stdexcept>
#include <thread>

using namespace dibs;
using test::raw_http;

namespace {

// A memory admin store whose retry_failed says what it was asked.
class retrying_store final : public admin_store {
 public:
  test::memory_admin inner;
  std::string retried_reason = "(none)";
  // A store whose admin calls fail as a SQL store's do, quoting its statement.
  std::atomic<bool> broken{false};
  static inline const std::string sql_error =
      "You have an error in your SQL syntax (in: SELECT lease_by, COUNT(*) FROM jobs WHERE lease_until IS NOT NULL)";
  awaitable<std::vector<job>> claim(claim_request r) override { return inner.claim(std::move(r)); }
  awaitable<write_result> complete(std::vector<completion> b) override { return inner.complete(std::move(b)); }
  awaitable<renew_result> renew(std::vector<renewal> b, millis l) override { return inner.renew(std::move(b), l); }
  awaitable<write_result> release(std::vector<release_item> b) override { return inner.release(std::move(b)); }
  awaitable<write_result> fail(std::vector<failure> b) override { return inner.fail(std::move(b)); }
  awaitable<store_stats> stats() override { return inner.stats(); }
  std::string describe() const override { return "memory"; }
  std::size_t seed(std::size_t n, std::uint64_t s) override { return inner.seed(n, s); }
  store_stats stats_blocking() override { return inner.stats_blocking(); }
  std::vector<lease_holder> lease_holders() override {
    if (broken) throw std::runtime_error(sql_error);
    return inner.lease_holders();
  }
  std::uint64_t release_worker(const std::string& name) override {
    if (broken) throw std::runtime_error(sql_error);
    return inner.release_worker(name);
  }
  std::uint64_t retry_failed(const retry_filter& which) override {
    // The page's "Retry these" means the group it counted: the whole reason, not a part of it.
    retried_reason = which.reason_is ? "is " + *which.reason_is : "contains " + which.reason_contains;
    return 3;
  }
};

// An engine (--follow) named "ctl-test" on an io_context of its own thread, calling a slow stub
// (so it holds leases while we look), with its controls given the store to administer.
struct workers_engine {
  stub::ipapi_stub api{stub::stub_options::loopback(std::chrono::milliseconds(200))};
  std::shared_ptr<retrying_store> st = std::make_shared<retrying_store>();
  std::shared_ptr<http::rate_limiter> limiter = std::make_shared<http::rate_limiter>();
  std::unique_ptr<engine> e;
  net::io_context ioc{1};
  std::unique_ptr<http::control_server> controls;
  std::thread runner;

  explicit workers_engine(bool with_admin = true) {
    api.start();
    st->inner.seed(2000, 7);
    http::processor_options p;
    p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
    p.limiter = limiter;
    engine_config cfg;
    cfg.concurrency = 2;
    cfg.claim_batch = 2;
    cfg.follow = true;
    cfg.worker_prefix = "ctl-test";
    e = std::make_unique<engine>(cfg, st, http::make_http_processor_factory(p));
    e->set_rate_control(limiter);
    http::control_options o;
    o.key = key;
    o.stats_max_age = std::chrono::milliseconds(0);  // every read sees the store as it is
    if (with_admin) o.admin = st.get();
    controls = std::make_unique<http::control_server>(ioc, *e, o);
    controls->start();
    e->start_on(ioc);
    runner = std::thread([this] { ioc.run(); });
  }
  ~workers_engine() {
    e->stop_now();
    net::post(ioc, [this] { controls->stop(); });
    runner.join();
    api.stop();
  }
  test::raw_answer post(const std::string& target, const std::string& body) {
    return raw_http(controls->port(), "POST", target, {{"Authorization", "Bearer " + key}, {"Content-Type", "application/json"}},
                    body);
  }
  static inline const std::string key = "workers-test-key-0123456789";
  test::raw_answer get(const std::string& target) { return raw_http(controls->port(), "GET", target); }
};

simdjson::dom::element parse(simdjson::dom::parser& p, const std::string& body) {
  simdjson::dom::element doc;
  REQUIRE_FALSE(p.parse(body).get(doc));
  return doc;
}

const simdjson::dom::element* find_by(simdjson::dom::array a, std::string_view by, simdjson::dom::element& out) {
  for (auto el : a)
    if (std::string_view(el["by"]) == by) {
      out = el;
      return &out;
    }
  return nullptr;
}

}  // namespace

TEST_CASE("GET /workers shows this process's shards and the store's lease holders, and POST /release frees a dead one's",
          "[controls][workers]") {
  workers_engine w;
  simdjson::dom::parser p;
  // A worker that died holding three leases (claimed straight in the store, never renewed).
  const auto dead = test::run_sync(w.st->claim(claim_request{3, "dead-host-0", std::chrono::seconds(60), std::chrono::seconds(0)}));
  REQUIRE(dead.size() == 3);

  simdjson::dom::element mine, theirs;
  REQUIRE(test::eventually([&] {
    const auto r = w.get("/workers");
    if (r.status != 200) return false;
    auto doc = parse(p, r.body);
    return find_by(doc["store"], "ctl-test-0", mine) != nullptr && find_by(doc["store"], "dead-host-0", theirs) != nullptr;
  }));
  auto r = w.get("/workers");
  auto doc = parse(p, r.body);
  CHECK(std::string_view(doc["worker_id"]) == "ctl-test");
  CHECK(std::string_view(doc["this_process"].at(0)["by"]) == "ctl-test-0");
  CHECK(uint64_t(doc["this_process"].at(0)["concurrency"]) == 2);
  REQUIRE(find_by(doc["store"], "dead-host-0", theirs));
  CHECK(uint64_t(theirs["leased"]) == 3);
  CHECK(double(theirs["renewed_s_ago"]) >= 0);
  CHECK_FALSE(bool(theirs["this_process"]));
  REQUIRE(find_by(doc["store"], "ctl-test-0", mine));
  CHECK(std::string_view(mine["state"]) == "live");  // this engine, renewing its leases
  CHECK(uint64_t(mine["expired"]) == 0);

  // Refused without the controls' key, or with a body that names no worker.
  CHECK(raw_http(w.controls->port(), "POST", "/release", {{"X-Dibs-Control", "1"}}, R"({"worker":"dead-host"})").status ==
        401);
  r = w.post("/release", R"({"worker":""})");
  CHECK(r.status == 400);
  CHECK_THAT(r.body, Catch::Contains("must not be empty"));
  CHECK(w.st->inner.lease_holders().size() >= 1);

  r = w.post("/release", R"({"worker":"dead-host"})");
  REQUIRE(r.status == 200);
  doc = parse(p, r.body);
  CHECK(uint64_t(doc["released"]) == 3);
  for (const auto& h : w.st->inner.lease_holders()) CHECK(h.by != "dead-host-0");
  // The dead worker's late write is discarded; the items are this engine's to do now.
  std::vector<completion> late;
  for (const auto& j : dead) late.push_back(completion{j.ref(), "{}"});
  CHECK(test::run_sync(w.st->complete(late)).applied == 0);
  doc = parse(p, w.get("/status").body);
  CHECK(uint64_t(doc["operator_released"]) == 3);
  CHECK(std::string_view(doc["worker_id"]) == "ctl-test");
  CHECK(std::string_view(doc["breaker"]["state"]) == "closed");
  CHECK(simdjson::dom::array(doc["failure_reasons"]).size() == 0);
  CHECK(doc["rate_per_second"].is_null());
  CHECK_FALSE(bool(doc["paused"]));
  // The dashboard's percent done and ETA: of the store's 2,000 items, with the recent rate.
  CHECK(double(doc["percent_done"]) >= 0);
  CHECK(double(doc["percent_done"]) <= 100);
  CHECK(double(doc["recent_per_s"]) >= 0);
  simdjson::dom::element eta;
  CHECK_FALSE(doc["eta_s"].get(eta));  // a number of seconds, or null before anything finished
  // Once items finish, the history has a rate and the ETA a figure.
  CHECK(test::eventually([&] {
    auto d = parse(p, w.get("/status").body);
    return double(d["recent_per_s"]) > 0 && d["eta_s"].is_number() && double(d["eta_s"]) > 0;
  }));
}

TEST_CASE("POST /concurrency and /rate change a running engine, and /status says so", "[controls][workers]") {
  workers_engine w;
  simdjson::dom::parser p;
  auto r = w.post("/concurrency", R"({"concurrency":6})");
  REQUIRE(r.status == 200);
  CHECK(uint64_t(parse(p, r.body)["concurrency"]) == 6);
  CHECK(w.e->concurrency() == 6);
  CHECK(test::eventually([&] { return !w.e->shards().empty() && w.e->shards()[0].concurrency == 6; }));
  // Six calls at once now, against the slow stub.
  CHECK(test::eventually([&] { return w.e->shards()[0].in_flight == 6; }));
  CHECK(uint64_t(parse(p, w.get("/status").body)["concurrency"]) == 6);
  r = w.post("/concurrency", R"({"concurrency":0})");
  CHECK(r.status == 400);
  CHECK_THAT(r.body, Catch::Contains("from 1 to 1000000"));

  r = w.post("/rate", R"({"rate":"45/min"})");
  REQUIRE(r.status == 200);
  CHECK(double(parse(p, r.body)["rate_per_second"]) == Approx(0.75));
  CHECK(w.limiter->per_second() == Approx(0.75));
  CHECK(double(parse(p, w.get("/status").body)["rate_per_second"]) == Approx(0.75));
  r = w.post("/rate", R"({"rate":null})");
  REQUIRE(r.status == 200);
  CHECK(parse(p, r.body)["rate_per_second"].is_null());
  CHECK(w.limiter->per_second() == 0);
  CHECK(w.post("/rate", R"({"rate":"quick"})").status == 400);

  r = w.post("/retry", R"({"reason_is":"timed out"})");
  REQUIRE(r.status == 200);
  CHECK(uint64_t(parse(p, r.body)["retried"]) == 3);
  CHECK(w.st->retried_reason == "is timed out");
  r = w.post("/retry", R"({"reason":"timed"})");  // as before: a part of the reason
  REQUIRE(r.status == 200);
  CHECK(w.st->retried_reason == "contains timed");
  CHECK(w.get("/concurrency").status == 405);
  r = w.get("/nowhere");
  CHECK(r.status == 404);  // the list of endpoints comes from the route table
  CHECK(std::string_view(parse(p, r.body)["error"]) ==
        "not found: GET /, /history, /status, /metrics, /workers; POST /pause, /resume, /release, /concurrency, /rate, /retry");
}

TEST_CASE("controls given no store answer 404 for the store's operations", "[controls][workers]") {
  workers_engine w(false);
  simdjson::dom::parser p;
  auto r = w.post("/release", R"({"worker":"dead-host"})");
  CHECK(r.status == 404);
  CHECK_THAT(r.body, Catch::Contains("no store to administer"));
  CHECK(w.post("/retry", "{}").status == 404);
  r = w.get("/workers");
  REQUIRE(r.status == 200);
  auto doc = parse(p, r.body);
  CHECK_FALSE(bool(doc["store_available"]));
  CHECK(std::string_view(doc["this_process"].at(0)["by"]) == "ctl-test-0");
}

TEST_CASE("control answers never quote the store's own error (SQL): GET /workers and a failed POST /release",
          "[controls][workers][secrets]") {
  workers_engine w;
  w.st->broken = true;
  auto r = w.get("/workers");
  REQUIRE(r.status == 200);
  CHECK(r.body.find("SELECT") == std::string::npos);
  CHECK(r.body.find("SQL") == std::string::npos);
  CHECK_THAT(r.body, Catch::Contains("\"store_error\":\"the store could not list its lease holders (its error is in "
                                     "the process's log)\""));
  r = w.post("/release", R"({"worker":"dead-host"})");
  CHECK(r.status == 503);
  CHECK(r.body.find("SELECT") == std::string::npos);
  CHECK_THAT(r.body, Catch::Contains("the store could not release the leases"));
}

namespace {
// Calls that wait until the test opens the gate; how many ran at once, and at most, since `measure`.
struct gated_calls {
  std::atomic<int> running{0};
  std::atomic<int> most_since_measure{0};
  std::atomic<bool> measure{false};
  std::atomic<bool> open{false};
  std::atomic<int> calls{0};
};
}  // namespace

TEST_CASE("engine::set_concurrency grows at once and shrinks without cutting a call short", "[engine][workers]") {
  auto st = std::make_shared<memory_store>();
  st->seed_random_ips(60, 2);
  auto g = std::make_shared<gated_calls>();
  processor_factory factory = [g](const shard_info&) -> std::unique_ptr<processor> {
    struct gated final : processor {
      std::shared_ptr<gated_calls> g;
      explicit gated(std::shared_ptr<gated_calls> x) : g(std::move(x)) {}
      awaitable<outcome> process(job) override {
        const int now = ++g->running;
        ++g->calls;
        if (g->measure) g->most_since_measure = std::max(g->most_since_measure.load(), now);
        net::steady_timer t(co_await net::this_coro::executor);
        while (!g->open) {  // the call "runs" until the test lets it end
          t.expires_after(std::chrono::milliseconds(1));
          co_await t.async_wait(net::use_awaitable);
        }
        --g->running;
        co_return outcome::done("{}");
      }
    };
    return std::make_unique<gated>(g);
  };
  engine_config cfg;
  cfg.shards = 1;
  cfg.concurrency = 2;
  cfg.claim_batch = 4;
  engine e(cfg, st, factory);
  CHECK_THROWS_WITH(e.set_concurrency(0), Catch::Contains("at least the number of shards (1)"));
  e.start();
  REQUIRE(test::eventually([&] { return g->running == 2; }));
  e.set_concurrency(5);
  REQUIRE(test::eventually([&] { return g->running == 5; }));
  CHECK(e.shards()[0].concurrency == 5);
  // Shrunk to one: the five running calls run on; no new one starts until none runs.
  e.set_concurrency(1);
  REQUIRE(test::eventually([&] { return e.shards()[0].concurrency == 1; }));
  g->measure = true;
  g->open = true;
  e.wait();
  CHECK(g->most_since_measure <= 1);
  const auto s = e.summary();
  CHECK(s.completed == 60);
  CHECK(s.lost_leases == 0);
  for (const auto& it : st->snapshot()) CHECK(it.writes == 1);
}

TEST_CASE("engine::set_rate needs a rate control, and reports the rate back", "[engine][workers][rate]") {
  auto st = std::make_shared<memory_store>();
  http::processor_options p;
  p.url = http::url_template::parse("http://127.0.0.1:9/json/{originatingIp}");
  engine e(engine_config{}, st, http::make_http_processor_factory(p));
  CHECK_FALSE(e.rate_adjustable());
  CHECK_THROWS_AS(e.set_rate(2), std::logic_error);
  auto limiter = std::make_shared<http::rate_limiter>(10, 1);
  e.set_rate_control(limiter);
  CHECK(e.rate_per_second() == std::optional<double>(10));
  e.set_rate(0.5);
  CHECK(limiter->per_second() == 0.5);
  CHECK(e.rate_per_second() == std::optional<double>(0.5));
  e.set_rate(0);
  CHECK_FALSE(e.rate_per_second());
}

// Issue 29: a live worker retrying 429s showed "oldest lease 84 s" on a 60 s lease and /workers
// said "expired": the items it gives back for a retry keep its name with the retry time as their
// until, and once that time has passed (the worker, throttled, has not claimed them again yet)
// they read as a dead worker's leases. Here a real engine is throttled by the stub (ip-api's
// limit: 2 answers a 1.5 s window, then 429) and the store is read as another process's
// /workers would read it, at a moment when one of its retries is due.
TEST_CASE("GET /workers shows a live worker retrying 429s as live: its retries that are due are not expired leases",
          "[controls][workers][throttled]") {
  using namespace std::chrono_literals;
  auto so = stub::stub_options::loopback();
  so.rate_limit = 2;
  so.rate_window = 1500ms;
  stub::ipapi_stub api(so);
  api.start();
  auto st = std::make_shared<test::memory_admin>();
  st->seed(400, 11);
  http::processor_options p;
  p.url = http::url_template::parse(api.base_url() + "/json/{originatingIp}");
  p.limiter = std::make_shared<http::rate_limiter>();
  engine_config cfg;
  cfg.concurrency = 4;
  cfg.claim_batch = 4;
  cfg.lease = 3s;  // renewed every 1.5 s while held
  cfg.follow = true;
  cfg.worker_prefix = "throttled";
  engine e(cfg, st, http::make_http_processor_factory(p));
  net::io_context ioc{1};
  e.start_on(ioc);
  std::thread runner([&] { ioc.run(); });

  std::vector<lease_holder> seen;
  const bool caught = test::eventually([&] {
    auto holders = st->lease_holders();
    for (const auto& h : holders)
      if (h.by == "throttled-0" && h.expired > 0) {
        seen = std::move(holders);
        return true;
      }
    return false;
  });
  e.stop_now();
  runner.join();
  api.stop();
  REQUIRE(caught);
  CHECK(api.rate_limited() > 0);

  simdjson::dom::parser parser;
  auto doc = parse(parser, http::workers_json("another-process", cfg.lease, {}, true, seen, ""));
  simdjson::dom::element live;
  REQUIRE(find_by(doc["store"], "throttled-0", live));
  INFO(simdjson::to_string(live));
  CHECK(std::string_view(live["state"]) == "live");
  CHECK(uint64_t(live["expired"]) == 0);
  CHECK(uint64_t(live["retry_due"]) > 0);
  CHECK(double(live["renewed_s_ago"]) < 3.0);  // under the lease: it renews
}
