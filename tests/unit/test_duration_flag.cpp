#include "apps/dibs/duration_flag.hpp"

#include <catch2/catch.hpp>

using dibs::cli::parse_duration;
using namespace std::chrono_literals;

TEST_CASE("durations on the command line", "[cli]") {
  CHECK(parse_duration("60s") == 60'000ms);
  CHECK(parse_duration("60") == 60'000ms);
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("1.5s") == 1'500ms);
  CHECK(parse_duration("2m") == 120'000ms);
  CHECK(parse_duration("1h") == 3'600'000ms);
  CHECK(parse_duration("30d") == 30 * 86'400'000ms);  // --answer-expiry 30d
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("abc"));
  CHECK_FALSE(parse_duration("-1s"));
  CHECK_FALSE(parse_duration("5 parsecs"));
  CHECK_FALSE(parse_duration("nan"));
}
