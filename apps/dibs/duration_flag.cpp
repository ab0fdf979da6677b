#include "duration_flag.hpp"

#include "adapters/http/rate/token_meter.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace dibs::cli {

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value) || value < 0) return std::nullopt;
  const std::string unit(end);
  double factor = 0;
  if (unit.empty() || unit == "s") factor = 1000;
  else if (unit == "ms") factor = 1;
  else if (unit == "m" || unit == "min") factor = 60'000;
  else if (unit == "h") factor = 3'600'000;
  else if (unit == "d") factor = 86'400'000;
  else return std::nullopt;
  const double ms = value * factor;
  if (ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds{static_cast<long long>(std::llround(ms))};
}

std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& text) {
  auto d = parse_duration(text);
  if (!d) throw std::invalid_argument(flag + ": '" + text + "' is not a duration (like 250ms, 60s, 2m, 7d)");
  return *d;
}

std::shared_ptr<http::rate_limiter> make_limiter(const std::string& rate, const std::string& token_rate) {
  std::shared_ptr<http::rate_limiter> out;
  if (rate.empty()) {
    out = std::make_shared<http::rate_limiter>();
  } else {
    auto per_second = http::parse_rate(rate);
    if (!per_second) throw std::invalid_argument("--rate '" + rate + "': expected N/s or N/min, like 45/min");
    out = std::make_shared<http::rate_limiter>(*per_second, 1);
  }
  if (!token_rate.empty()) {
    auto per_second = http::parse_rate(token_rate);
    if (!per_second || *per_second * 60 < 1)
      throw std::invalid_argument("--token-rate '" + token_rate + "': expected N/min or N/s of at least 1 token a minute, like 150000/min");
    out->tokens().give_limit(*per_second * 60);
  }
  return out;
}

}  // namespace dibs::cli
