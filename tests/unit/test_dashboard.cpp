// The dashboard's pure parts: the latency quantile from a histogram's buckets, the history's
// samples and its bound, and the page the server renders (counts without JavaScript, the token,
// nothing fetched from elsewhere).
#include "adapters/control/dashboard_page.hpp"
#include "adapters/control/run_history.hpp"
#include "adapters/control/run_progress.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace dibs;
using namespace dibs::http;

TEST_CASE("a quantile from histogram buckets interpolates inside the bucket it falls in", "[dashboard][unit]") {
  const std::vector<double> bounds{0.01, 0.1, 1};
  CHECK_FALSE(bucket_quantile(bounds, {0, 0, 0, 0}, 0.5));
  // 10 observations in (0.01, 0.1]: the median halfway through that bucket.
  CHECK(*bucket_quantile(bounds, {0, 10, 0, 0}, 0.5) == Approx(0.055));
  // 90 fast ones and 10 slow ones: p50 among the fast, p99 among the slow.
  CHECK(*bucket_quantile(bounds, {90, 0, 10, 0}, 0.5) == Approx(0.01 * 50.0 / 90.0));
  CHECK(*bucket_quantile(bounds, {90, 0, 10, 0}, 0.99) == Approx(0.1 + 0.9 * 0.9));
  // Beyond the last bound: the last bound is all a histogram can say.
  CHECK(*bucket_quantile(bounds, {0, 0, 0, 5}, 0.5) == 1.0);
}

namespace {
run_reading at(double t, std::uint64_t outcomes, std::uint64_t requests, std::vector<std::uint64_t> latency = {}) {
  run_reading r;
  r.t_s = t;
  r.outcomes = outcomes;
  r.requests = requests;
  if (!latency.empty()) {
    r.latency_bounds = {0.01, 0.1, 1};
    r.latency_counts = std::move(latency);
  }
  return r;
}
}  // namespace

TEST_CASE("the history turns cumulative readings into per-second samples, and keeps the last N", "[dashboard][unit]") {
  run_history h(3);
  h.add(at(100, 0, 0, {0, 0, 0, 0}));
  CHECK(h.samples().empty());  // one reading is no interval
  h.add(at(101, 20, 25, {0, 25, 0, 0}));
  REQUIRE(h.samples().size() == 1);
  CHECK(h.samples().back().docs_per_s == Approx(20));
  CHECK(h.samples().back().requests_per_s == Approx(25));
  REQUIRE(h.samples().back().p50_s);
  CHECK(*h.samples().back().p50_s == Approx(0.055));
  h.add(at(103, 30, 25, {0, 25, 0, 0}));  // two seconds, 10 documents, no calls
  CHECK(h.samples().back().docs_per_s == Approx(5));
  CHECK_FALSE(h.samples().back().p50_s);  // no call ended in that interval
  h.add(at(104, 31, 26, {0, 25, 1, 0}));
  h.add(at(105, 32, 27, {0, 25, 2, 0}));
  CHECK(h.samples().size() == 3);  // bounded
  CHECK(h.samples().front().t_s == 103);
  const auto json = h.json();
  CHECK_THAT(json, Catch::StartsWith("{\"interval_s\":1,\"samples\":[{\"t\":-2,\"docs_per_s\":5,"));
  CHECK_THAT(json, Catch::Contains("\"p50_s\":null"));
  CHECK_THAT(json, Catch::EndsWith("\"throttled_per_s\":0,\"p50_s\":0.55,\"p99_s\":0.991}]}"));
  // Readings without HTTP figures (a custom processor): rates, no latency.
  run_history plain;
  plain.add(at(1, 0, 0));
  plain.add(at(2, 3, 0));
  CHECK(plain.samples().back().docs_per_s == Approx(3));
  CHECK_FALSE(plain.samples().back().p99_s);
}

TEST_CASE("the dashboard page carries the counts (for a browser without JavaScript) and the token", "[dashboard][unit]") {
  dashboard_counts c;
  c.run.completed = 1234;
  c.run.failed = 7;
  c.in_flight = 3;
  c.paused = true;
  c.store = store_stats{40, 2, 1, 1234, 7};
  const auto page = dashboard_html(c, "00ff00ff00ff00ff00ff00ff00ff00ff");
  CHECK_THAT(page, Catch::StartsWith("<!doctype html>"));
  CHECK_THAT(page, Catch::Contains("<dd id=\"completed\">1234</dd>"));
  CHECK_THAT(page, Catch::Contains("<dd id=\"failed\">7</dd>"));
  CHECK_THAT(page, Catch::Contains("<dd id=\"in_flight\">3</dd>"));
  CHECK_THAT(page, Catch::Contains("<dd id=\"pending\">40</dd>"));
  CHECK_THAT(page, Catch::Contains("<dd id=\"leased\">3</dd>"));  // live and expired leases
  CHECK_THAT(page, Catch::Contains("<dd id=\"done\">1234</dd>"));
  CHECK_THAT(page, Catch::Contains("<dd id=\"store_failed\">7</dd>"));
  CHECK_THAT(page, Catch::Contains("<span id=\"state\" class=\"badge paused\">paused</span>"));
  CHECK_THAT(page, Catch::Contains("data-token=\"00ff00ff00ff00ff00ff00ff00ff00ff\""));
  CHECK_THAT(page, Catch::Contains("'X-Dibs-Token': token"));
  CHECK_THAT(page, Catch::EndsWith("</html>\n"));
  // Nothing fetched from anywhere: no src or href attribute, no URL but the SVG namespace.
  CHECK_FALSE(std::regex_search(page, std::regex(R"((src|href)\s*=)", std::regex::icase)));
  const std::regex url("https?://[^'\" ]+");
  for (std::sregex_iterator it(page.begin(), page.end(), url), end; it != end; ++it)
    CHECK(it->str() == "http://www.w3.org/2000/svg");
  // The run's own text is never written as HTML by the script.
  CHECK(page.find("innerHTML") == std::string::npos);

  CHECK_THAT(page, Catch::Contains("<dd id=\"percent_done\">96.7 %</dd>"));  // (1234 + 7) of 1284
  CHECK_THAT(page, Catch::Contains("<dd id=\"eta\" class=\"na\">"));  // no rate yet: the script fills it

  c.store.reset();  // the store could not say
  const auto without = dashboard_html(c, "ab");
  CHECK_THAT(without, Catch::Contains("<dd id=\"pending\" class=\"na\">not available</dd>"));
}

TEST_CASE("the dashboard's percent done and ETA come from the store's counts and the recent completion rate",
          "[dashboard][unit]") {
  // 600 done, 100 failed, 250 pending and 50 leased: 70 % finished, 300 open.
  const store_stats s{250, 40, 10, 600, 100};
  auto p = progress_of(s, 12.5);
  REQUIRE(p.percent_done);
  CHECK(*p.percent_done == Approx(70.0));
  REQUIRE(p.eta_s);
  CHECK(*p.eta_s == Approx(24.0));  // 300 open at 12.5/s
  CHECK(progress_members_json(p) == ",\"percent_done\":70,\"eta_s\":24,\"recent_per_s\":12.5");

  // Nothing finished recently (paused, throttled, the API down): no estimate, not "0 s" nor infinity.
  p = progress_of(s, 0);
  CHECK(*p.percent_done == Approx(70.0));
  CHECK_FALSE(p.eta_s);
  CHECK(progress_members_json(p) == ",\"percent_done\":70,\"eta_s\":null,\"recent_per_s\":0");
  // All finished: 100 % and nothing left to wait for, whatever the rate.
  p = progress_of(store_stats{0, 0, 0, 5, 1}, 0);
  CHECK(*p.percent_done == Approx(100.0));
  CHECK(*p.eta_s == 0);
  // An empty store: no share to tell.
  CHECK_FALSE(progress_of(store_stats{}, 3).percent_done);

  // The rate the ETA assumes: the mean of the last samples (fewer while the run is young).
  run_history h;
  CHECK(h.recent_docs_per_s() == 0);
  run_reading r;
  for (int i = 0; i <= 40; ++i) {
    r.t_s = i;
    r.outcomes += i <= 10 ? 100 : 10;  // 100/s for the first 10 s, then 10/s
    h.add(r);
  }
  CHECK(h.recent_docs_per_s(30) == Approx(10.0));
  CHECK(h.recent_docs_per_s(40) == Approx((10 * 100.0 + 30 * 10.0) / 40));
  CHECK(h.recent_docs_per_s(1000) == Approx((10 * 100.0 + 30 * 10.0) / 40));
}
