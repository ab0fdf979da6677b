// `dibs enrich`, default flags, against an API that meters a quota and says so in every answer
// (tests/servers/small_api.py --quota: Python's http.server, X-RateLimit-Limit, -Remaining and
// -Reset): windows on the clock's seconds as GitHub-style APIs count them, answers taking 10 or
// 50 ms, kept-alive connections or one per request (HTTP/1.0), the reset in epoch seconds or
// epoch milliseconds; and a quota that asks for a day between requests.
#include "http_servers/small_api.hpp"

#include "support/api_items.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

using namespace dibs::test;

TEST_CASE("a quota of 50 a 1 s window on the clock's seconds, answers in 10 or 50 ms: at most 1% of calls answered 429",
          "[small][quota]") {
  // Before the pacer held the windows as the API counts them, each window's reset brought a
  // burst (4-19% answered 429 at 10-50 ms; with the reset on the clock's seconds, 1,529 of 2,520).
  for (const auto& [mode, latency, reset] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"keepalive", "10", "epoch"}, {"close", "10", "epoch"}, {"keepalive", "50", "epoch-ms"}, {"close", "50", "epoch"}}) {
    DYNAMIC_SECTION(mode << ", " << latency << " ms, reset in " << reset) {
      small_api api(mode, {"--quota", "50", "--window", "1", "--latency-ms", latency, "--reset-style", reset});
      const auto dir = scratch_dir("dibs-quota", mode + latency);
      write_items(dir / "in.jsonl", 400);
      const auto [rc, out] = enrich_lines(dir, api.base_url() + "/json/{ip}", {}, std::chrono::seconds(120));
      INFO(out);
      CHECK(rc == 0);
      CHECK_THAT(out, Catch::Contains("summary: completed=400 failed=0"));
      const int refused = stat_of(static_cast<std::uint16_t>(api.port()), "quota_refused");
      const int requests = stat_of(static_cast<std::uint16_t>(api.port()), "requests");
      WARN(mode << ", " << latency << " ms: " << refused << " of " << requests << " requests answered 429");
      CHECK(requests >= 400);
      CHECK(refused * 100 <= requests);
    }
  }
}

TEST_CASE("a quota that asks for a day between requests is held to --max-retry-after: the run ends", "[small][quota]") {
  // X-RateLimit-Remaining: 2 with a reset a day away spaced calls ~12 h apart, whatever
  // --max-retry-after said: the run sat still until killed.
  small_api api("keepalive", {"--quota", "3", "--window", "86400"});
  const auto dir = scratch_dir("dibs-quota", "day");
  write_items(dir / "in.jsonl", 6);
  const auto [rc, out] = enrich_lines(dir, api.base_url() + "/json/{ip}",
                                      {"--max-retry-after", "2s", "--max-attempts", "2"}, std::chrono::seconds(90));
  INFO(out);
  CHECK(rc != 137);  // not killed: it ended by itself
  CHECK(rc == 1);    // the items past the quota failed, with the API's words
  CHECK_THAT(out, Catch::Contains("longest wait allowed (max_retry_after, 2 s)"));
  CHECK_THAT(out, Catch::Contains("HTTP 429"));
  // The 429s are counted where the user looks: the run's last lines (and /metrics).
  CHECK_THAT(out, Catch::Contains(" of them answered 429 (too many requests)"));
}
