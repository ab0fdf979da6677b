// What an API says of its quota in its answers' headers, read the same way whatever its dialect:
//   - GitHub and most others: X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset (the
//     window's end as epoch seconds, or, below 10^9, as seconds from now);
//   - the IETF httpapi drafts: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (seconds
//     from now), or one RateLimit field, either "limit=100, remaining=50, reset=30" or the later
//     structured form '"default";r=50;t=30', with RateLimit-Policy '"default";q=100;w=60' (a
//     window of 60 s, which stands for the reset when none is given).
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
};

// The quota the headers state, when they state what is left; nullopt otherwise. `now` is this
// machine's clock; an epoch reset is taken relative to the server's Date when it sent one, so a
// skewed clock does not stretch or shrink the window.
std::optional<quota_reading> read_quota(const std::vector<std::pair<std::string, std::string>>& headers,
                                        std::chrono::system_clock::time_point now);

// How far apart requests go so that what is left lasts to the window's end: the window's rest
// over what is left, less `reserve` for requests sent but not yet counted (a reset in whole
// seconds taken as half a second earlier: servers round it up). nullopt when the
// reading says nothing of time, or there is plenty (more left than `plenty_per_s` a second of it).
// Zero left (after the reserve): the caller pauses until the reset instead.
std::optional<std::chrono::microseconds> quota_spacing(const quota_reading& q, std::int64_t reserve = 1,
                                                       double plenty_per_s = 1e6);

}  // namespace dibs::http
