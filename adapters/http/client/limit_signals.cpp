#include "limit_signals.hpp"

#include <dibs/setting_error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace dibs::http {

limit_signal overload_signal(int status) {
  if (status == 429) return limit_signal::throttled;
  if (status == 502 || status == 503 || status == 504) return limit_signal::unavailable;
  return limit_signal::none;
}

bool says_requests_scarce(limit_signal why) {
  return why == limit_signal::latency || why == limit_signal::throttled || why == limit_signal::unavailable;
}

std::chrono::microseconds refused_permit_hold(std::chrono::microseconds typical) {
  return std::clamp<std::chrono::microseconds>(typical, std::chrono::milliseconds(5), std::chrono::seconds(1));
}

limit_signal failure_signal(const boost::system::error_code& ec) {
  namespace error = boost::asio::error;
  if (!ec) return limit_signal::none;
  if (ec == boost::beast::error::timeout || ec == error::timed_out) return limit_signal::timeout;
  if (ec == error::connection_reset || ec == error::broken_pipe || ec == error::connection_aborted)
    return limit_signal::reset;
  if (ec == error::connection_refused) return limit_signal::refused;
  return limit_signal::none;
}

std::string overload_advice(limit_signal why, const std::string& origin, std::size_t limit, double answered_per_s) {
  // Keep under what got through, by a tenth: the API's own limit is likely a round number.
  const auto rate = answered_per_s >= 1 ? std::to_string(static_cast<long long>(std::floor(answered_per_s * 0.9))) : std::string();
  const std::string got = " (about " + std::to_string(static_cast<long long>(answered_per_s)) + "/s got through";
  const std::string keep = setting_name("rate") + " " + rate + "/s keeps under it";
  const std::string rate_hint = rate.empty() ? "" : got + "): " + keep;
  // A 429 at a lower limit is as often a cap on one client's calls at once as a rate: say both,
  // and the rate's hint only for the rate.
  const std::string cap_or_rate_hint = rate.empty() ? "" : got + "; if it is a rate, " + keep + ")";
  const std::string lowered = "concurrency for " + origin + " lowered to " + std::to_string(limit) + ": ";
  switch (why) {
    case limit_signal::throttled:
      return lowered + "429 Too Many Requests: the API takes fewer calls at once, or limits its rate" + cap_or_rate_hint;
    case limit_signal::unavailable:
      return lowered + "502/504 answers: the proxy in front of the API can't reach it in time (the API can't keep up)" +
             rate_hint;
    case limit_signal::dropped_handshake:
      return lowered + "the server accepts new connections too slowly (its listen backlog overflows); "
                       + setting_name("max_connections") + " " + std::to_string(limit) + " keeps fewer open";
    case limit_signal::timeout:
      return lowered + "requests time out: the API can't keep up";
    case limit_signal::reset:
      return lowered + "connections reset: the API drops connections it can't serve";
    case limit_signal::refused:
      return lowered + "connections refused: the API refuses connections it can't serve";
    case limit_signal::none:
    case limit_signal::latency:
      return {};
  }
  return {};
}

std::string pace_advice(int status, const std::string& origin) {
  return origin + " answers HTTP " + std::to_string(status) +
         " to some requests: it limits its rate. Requests to it are now paced, following what it lets through "
         "(the end of the run says the rate found; " + setting_name("rate") + " sets one of your own)";
}

}  // namespace dibs::http
