// What an API says of its quota in its answers' headers, read the same way whatever its dialect:
//   - GitHub and most others: X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset (the
//     window's end as epoch seconds, from 10^12 as epoch milliseconds, or, below 10^9, as
//     seconds from now);
//   - the IETF httpapi drafts: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (seconds
//     from now), or one RateLimit field, either "limit=100, remaining=50, reset=30" or the later
//     structured form '"default";r=50;t=30', with RateLimit-Policy '"default";q=100;w=60' (a
//     window of 60 s, which stands for the reset when none is given).
//   - the LLM providers' requests bucket: OpenAI's and Azure's x-ratelimit-*-requests, Anthropic's
//     anthropic-ratelimit-requests-* (provider_headers.hpp, which reads their tokens too).
// ip-api's X-Rl/X-Ttl are its own stop signal (stop_until_from_headers), not read here.
// Pure; unit-tested in tests/unit/test_quota_headers.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dibs::http {

// RFC 9110 IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (a Date, a Retry-After).
std::optional<std::time_t> http_date(const std::string& v);

struct quota_reading {
  std::optional<std::int64_t> limit;  // requests a window allows, when said
  std::int64_t remaining = 0;         // requests left in this window
  std::chrono::milliseconds reset_in{0};  // until the window ends (0: unknown)
  // The window's length, when said (RateLimit-Policy's w).
  std::optional<std::chrono::milliseconds> window;
  // reset_in is no whole number of seconds rounded up by the server (an epoch read by this
  // machine's clock, or a fraction of a second): the window's end is known to the millisecond.
  bool exact = false;
};

// The quota the headers state, when they state what is left; nullopt otherwise. `now` is this
// machine's clock; an epoch reset is read by it (to the millisecond: a server's Date says only
// the second), unless the server's Date is 2 s or more away from it: then by the server's clock,
// so a skewed clock does not stretch or shrink the window.
std::optional<quota_reading> read_quota(const std::vector<std::pair<std::string, std::string>>& headers,
                                        std::chrono::system_clock::time_point now);

}  // namespace dibs::http
