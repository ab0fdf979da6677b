// `dibs failed`'s lines (apps/dibs/failed_line.hpp) and the memory store's failed items, without a server.
#include "apps/dibs/failed_line.hpp"
#include "support/memory_admin.hpp"

#include <catch2/catch.hpp>

using dibs::cli::api_words_in;

TEST_CASE("failed line: the API's words are what follows the status line in the reason", "[failed]") {
  CHECK(api_words_in("HTTP 404 Not Found: no location known") == std::optional<std::string>("no location known"));
  CHECK(api_words_in("gave up after 5 attempts: HTTP 503 Service Unavailable: try: later") ==
        std::optional<std::string>("try: later"));
  CHECK_FALSE(api_words_in("HTTP 404 Not Found"));
  CHECK_FALSE(api_words_in("the API has no data: private range"));
  CHECK_FALSE(api_words_in("connect: Connection refused"));
}

TEST_CASE("failed line: every member, JSON escaped, and unknowns as null", "[failed]") {
  dibs::failed_item f;
  f.id = "7";
  f.source = "a \"quoted\" key";
  f.reason = "HTTP 400 Bad Request: {\"error\":\"bad\"}";
  f.http_status = 400;
  f.attempts = 2;
  f.failed_at = dibs::store_time(std::chrono::microseconds(1'795'876'175'123'456));
  CHECK(dibs::cli::failed_line(f) ==
        R"({"key":"7","source":"a \"quoted\" key","reason":"HTTP 400 Bad Request: {\"error\":\"bad\"}","http_status":400,)"
        R"("answer":"{\"error\":\"bad\"}","attempts":2,"failed_at":"2026-11-28T14:29:35.123456Z"})");
  f.source.reset();
  f.failed_at.reset();
  const auto line = dibs::cli::failed_line(f);
  CHECK_THAT(line, Catch::Contains(R"("source":null)") && Catch::Contains(R"("failed_at":null})"));
  CHECK(dibs::cli::key_of_failed_line(line) == std::optional<std::string>("7"));
  CHECK_FALSE(dibs::cli::key_of_failed_line(R"({"key":7})"));
  CHECK_FALSE(dibs::cli::key_of_failed_line("not json"));
}

TEST_CASE("memory store: failed items listed by reason, time and id, and exactly those put back", "[failed][memory]") {
  dibs::test::memory_admin m;
  m.seed(4, 1);
  auto jobs = m.inner().claim_now({4, "w"});
  REQUIRE(jobs.size() == 4);
  std::vector<dibs::failure> fails;
  for (std::size_t i = 0; i < 3; ++i) fails.push_back({jobs[i].ref(), i == 2 ? "HTTP 500 oops: x" : "HTTP 404 Not Found: no", 404, 1});
  m.inner().fail_now(fails);
  auto listed = [&](const dibs::retry_filter& w) {
    std::vector<dibs::failed_item> out;
    m.list_failed(w, [&](const dibs::failed_item& f) { out.push_back(f); });
    return out;
  };
  const auto all = listed({});
  REQUIRE(all.size() == 3);
  CHECK(all[0].id == jobs[0].id);
  CHECK(all[0].source.has_value());
  CHECK(all[0].failed_at.has_value());
  dibs::retry_filter by_reason;
  by_reason.reason_contains = "404";
  CHECK(listed(by_reason).size() == 2);
  dibs::retry_filter future;
  future.since = dibs::store_clock::now() + std::chrono::hours(1);
  CHECK(listed(future).empty());
  dibs::retry_filter one;
  one.ids = {jobs[1].id, "no such id"};
  CHECK(m.retry_failed(one) == 1);
  const auto left = listed({});
  REQUIRE(left.size() == 2);
  CHECK(left[0].id == jobs[0].id);
  CHECK(left[1].id == jobs[2].id);
  CHECK(m.stats_blocking().pending == 1);  // the one put back (the fourth is still leased)
  CHECK(m.stats_blocking().failed == 2);
}
