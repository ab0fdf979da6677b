// Durations on the command line: "250ms", "1.5s", "2m", "1h"; a bare number means seconds.
#pragma once

#include <dibs/http/rate_limiter.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace dibs::cli {

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text);

// The shared limiter for `--rate` ("" = no rate of its own; the API's stop signals still apply).
std::shared_ptr<http::rate_limiter> make_limiter(const std::string& rate, const std::string& token_rate = {});

// The duration, or std::invalid_argument naming the flag: "--lease: 'soon' is not a duration".
std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& text);

}  // namespace dibs::cli
