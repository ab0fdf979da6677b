// The claim protocol on the memory store, with a manual clock so that expiry needs no sleeping.
#include "support/run_sync.hpp"
#include "support/store_suite.hpp"

#include <dibs/stores/memory_store.hpp>

#include <catch2/catch.hpp>

#include <atomic>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
class memory_harness final : public test::store_harness {
 public:
  memory_harness() {
    memory_store::options o;
    o.now = [this] { return store_time{} + std::chrono::hours(24 * 365 * 50) + offset_ms_.load() * 1ms; };
    store_ = std::make_shared<memory_store>(o);
  }
  std::shared_ptr<store> open() override { return store_; }
  std::vector<std::string> seed(std::size_t n) override {
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < n; ++i) ids.push_back(store_->add("198.51.100." + std::to_string(i % 250)));
    return ids;
  }
  void let_time_pass(std::chrono::milliseconds d) override { offset_ms_ += d.count(); }
  std::optional<std::string> target_of(const std::string& id) override { return store_->get(id)->target_json; }

  std::shared_ptr<memory_store> store_;
  std::atomic<std::int64_t> offset_ms_{0};
};
}  // namespace

TEST_CASE("memory store keeps the claim protocol", "[memory][protocol]") {
  memory_harness h;
  test::run_store_suite(h);
}

TEST_CASE("memory store writes a target at most once per lease", "[memory]") {
  memory_harness h;
  auto ids = h.seed(1);
  auto& s = *h.store_;
  auto a = s.claim_now({1, "A", 100ms, 0ms});
  REQUIRE(a.size() == 1);
  CHECK(s.complete_now({completion{a[0].ref(), "{}"}}).applied == 1);
  CHECK(s.complete_now({completion{a[0].ref(), "{\"again\":1}"}}).applied == 0);
  auto item = s.get(a[0].id);
  CHECK(item->writes == 1);
  CHECK(*item->target_json == "{}");
  CHECK_FALSE(item->lease.has_value());
}

TEST_CASE("memory store hands the source field to the job, missing or odd included", "[memory]") {
  memory_harness h;
  auto& s = *h.store_;
  s.add("203.0.113.9");
  job_field missing;
  missing.st = job_field::state::missing;
  s.add(missing);
  job_field odd;
  odd.st = job_field::state::not_string;
  odd.type_name = "int32";
  s.add(odd);
  auto got = s.claim_now({3, "A", 100ms, 0ms});
  REQUIRE(got.size() == 3);
  REQUIRE(got[0].field("originatingIp"));
  CHECK(got[0].field("originatingIp")->value == "203.0.113.9");
  CHECK(got[1].field("originatingIp")->st == job_field::state::missing);
  CHECK(got[2].field("originatingIp")->st == job_field::state::not_string);
  CHECK(got[2].field("originatingIp")->type_name == "int32");
}

TEST_CASE("memory store seeds public addresses and shows documents in their final shape", "[memory]") {
  memory_store s;
  s.seed_random_ips(50, 7);
  REQUIRE(s.size() == 50);
  CHECK(s.document_json("1").find("\"location\": null") != std::string::npos);
  auto a = s.claim_now({1, "A", 60'000ms, 0ms});
  REQUIRE(a.size() == 1);
  CHECK(s.document_json(a[0].id).find("\"lock\": {\"by\": \"A\"") != std::string::npos);
  s.complete_now({completion{a[0].ref(), "{\"city\":\"X\"}"}});
  const auto doc = s.document_json(a[0].id);
  CHECK(doc.find("\"location\": {\"city\":\"X\"}") != std::string::npos);
  CHECK(doc.find("lock") == std::string::npos);
  CHECK(s.document_json("999") == "null");
}

TEST_CASE("memory store: a retry its holder gave back is claimable when due, without the takeover's grace", "[memory]") {
  // The grace guards a holder still at work whose lease ran out; a retry was given back. With
  // the grace added, a retry 30 ms away waited a second more, and a run's last retries were its
  // tail (3,000 items against an API that refuses past 4 at once: 2.5 s where a fixed 4 took 1.8).
  memory_harness h;
  h.seed(2);
  auto& s = *h.store_;
  auto a = s.claim_now({2, "A", 60'000ms, 1'000ms});
  REQUIRE(a.size() == 2);
  CHECK(s.release_now({release_item{a[0].ref(), 50ms, "HTTP 429", 429}}).applied == 1);
  SECTION("due at its retry time") {
    h.let_time_pass(40ms);
    CHECK(s.claim_now({2, "B", 60'000ms, 1'000ms}).empty());  // not due yet
  }
  SECTION("a renewal that lands after the release (the JSON Lines store runs its calls on a pool) leaves the retry's time") {
    s.renew_now({renewal{a[0].ref()}}, 60'000ms);  // moved to a whole lease, it waited that and the grace
    h.let_time_pass(40ms);
  }
  h.let_time_pass(20ms);
  auto b = s.claim_now({2, "B", 60'000ms, 1'000ms});
  REQUIRE(b.size() == 1);  // due, and the other item's lease (held, not given back) stays A's
  CHECK(b[0].id == a[0].id);
  CHECK(b[0].attempts == 2);
  // The holder's stale write is fenced: the lease is B's now.
  CHECK(s.complete_now({completion{a[0].ref(), "{}"}}).applied == 0);
  const auto st = s.stats_now();
  CHECK(st.leased_live == 2);
}
