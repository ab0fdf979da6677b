// What an exchange's end says of the API's load, for its adaptive limit (adaptive_limit.hpp):
// pure decisions, unit-tested without a server.
#pragma once

#include <dibs/http/adaptive_limit.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <string>

namespace dibs::http {

// An answer's status: 429 (throttled) and 502/503/504 (the API or its upstream can't keep up)
// are overload; any other answer, 500 among them (one item's bug), is not. (origin_limit sends
// 429 and 503 to the limit, then, once it is 1, to the pace: they are how APIs refuse past their
// capacity or their rate.)
limit_signal overload_signal(int status);

// Whether the limit going down for `why` says the API serves fewer requests than were sent (a
// queue: latency; a refusal: 429, 502-504), so requests are what holds the calls back
// (origin_limit::requests_scarce). Connection signals (a full backlog, resets, timeouts, refused
// connects) say the server accepts slowly or is gone, not that it serves few at once.
bool says_requests_scarce(limit_signal why);

// How long the permit of a request refused for the API's load (429/503 saying nothing of when to
// come back) stays taken after it was sent: as long as an answer usually takes (`typical`), and
// 5 ms at least, a second at most. A refusal comes back at once, and its permit would go to the
// next request at once, to be refused at once: against nginx's limit_req in front of Python's
// http.server (answers in 0.4 ms), 200 refusals in the 10 ms before the limit's next decision.
std::chrono::microseconds refused_permit_hold(std::chrono::microseconds typical);

// An exchange that brought no answer: timeouts, resets and refused connections are overload
// (a server past its capacity stops answering, accepting, or keeping connections); a name that
// does not resolve, a TLS refusal or a cancellation says nothing of the load.
limit_signal failure_signal(const boost::system::error_code& ec);

// One line for the operator when the limit went down because of what the API said, with what to
// do about it (`answered_per_s`: the answers per second that got through lately, 0 if unknown),
// or "" for signals that need no advice (latency: the limit simply follows the server).
std::string overload_advice(limit_signal why, const std::string& origin, std::size_t limit, double answered_per_s);

// One line for the operator when the API refused requests for its rate (HTTP `status`, 429 or
// 503) and dibs paced them (rate_finder.hpp), with how to set a rate of one's own. No figure:
// the first pace is a guess (from the rate requests went at), the rate found comes later.
std::string pace_advice(int status, const std::string& origin);

}  // namespace dibs::http
