#include "quota_headers.hpp"
#include "provider_headers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <strings.h>

namespace dibs::http {

namespace {
using headers_t = std::vector<std::pair<std::string, std::string>>;

const std::string* find(const headers_t& headers, const char* name) {
  for (const auto& [k, v] : headers)
    if (::strcasecmp(k.c_str(), name) == 0) return &v;
  return nullptr;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// A non-negative number (decimals allowed: some send "1.5" seconds); nullopt otherwise.
std::optional<double> number(const std::string& text) {
  const auto t = trimmed(text);
  if (t.empty() || t.size() > 24) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (*end != '\0' || !(v >= 0) || v > 1e15) return std::nullopt;
  return v;
}

// "a=1, b=2" or '"default";r=50;t=30': the value of parameter `key` in the first item naming it.
std::optional<double> parameter(const std::string& field, const char* key) {
  const std::string k = key;
  std::size_t i = 0;
  while (i < field.size()) {
    const auto end = field.find_first_of(";,", i);
    const auto part = trimmed(std::string_view(field).substr(i, end == std::string::npos ? std::string::npos : end - i));
    if (const auto eq = part.find('='); eq != std::string::npos && trimmed(part.substr(0, eq)) == k)
      return number(part.substr(eq + 1));
    if (end == std::string::npos) break;
    i = end + 1;
  }
  return std::nullopt;
}

std::chrono::milliseconds seconds_ms(double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000.0 + 0.5)); }

// "Now" in epoch seconds as the server counts its window: this machine's clock, to the
// millisecond; moved by the whole seconds the server's Date is away from it when that is 2 s or
// more (a Date says only the second: nearer than that, it is no news of a skew).
double base_of_epoch(const headers_t& headers, std::chrono::system_clock::time_point now);
}  // namespace

std::optional<std::time_t> http_date(const std::string& v) {
  std::tm tm{};
  const char* end = ::strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!end || *end != '\0') return std::nullopt;
  return ::timegm(&tm);
}

namespace {
double base_of_epoch(const headers_t& headers, std::chrono::system_clock::time_point now) {
  const double ours = std::chrono::duration<double>(now.time_since_epoch()).count();
  const auto* date = find(headers, "Date");
  const auto server_now = date ? http_date(*date) : std::nullopt;
  if (!server_now) return ours;
  const double skew = static_cast<double>(*server_now) - std::floor(ours);
  return std::abs(skew) >= 2.0 ? ours + skew : ours;
}
}  // namespace

std::optional<quota_reading> read_quota(const headers_t& headers, std::chrono::system_clock::time_point now) {
  quota_reading q;
  // The structured field of the drafts: one field says it all.
  if (const auto* field = find(headers, "RateLimit")) {
    auto remaining = parameter(*field, "r");
    if (!remaining) remaining = parameter(*field, "remaining");
    if (remaining) {
      q.remaining = static_cast<std::int64_t>(*remaining);
      auto reset = parameter(*field, "t");
      if (!reset) reset = parameter(*field, "reset");
      if (auto limit = parameter(*field, "limit")) q.limit = static_cast<std::int64_t>(*limit);
      if (const auto* policy = find(headers, "RateLimit-Policy")) {
        if (auto quota = parameter(*policy, "q")) q.limit = static_cast<std::int64_t>(*quota);
        const auto w = parameter(*policy, "w");
        if (w && *w > 0) q.window = seconds_ms(*w);
        if (!reset) reset = w;
      }
      if (reset) {
        q.reset_in = seconds_ms(*reset);
        q.exact = *reset != static_cast<double>(static_cast<std::int64_t>(*reset));
      }
      return q;
    }
  }
  for (const char* prefix : {"RateLimit-", "X-RateLimit-"}) {
    const auto* remaining = find(headers, (std::string(prefix) + "Remaining").c_str());
    const auto left = remaining ? number(*remaining) : std::nullopt;
    if (!left) continue;
    q.remaining = static_cast<std::int64_t>(*left);
    if (const auto* limit = find(headers, (std::string(prefix) + "Limit").c_str()))
      if (auto n = number(*limit)) q.limit = static_cast<std::int64_t>(*n);
    const auto* reset = find(headers, (std::string(prefix) + "Reset").c_str());
    if (auto r = reset ? number(*reset) : std::nullopt) {
      if (*r >= 1e9) {  // an epoch (GitHub), in seconds or (from 10^12) in milliseconds
        const double at = *r >= 1e12 ? *r / 1000.0 : *r;
        q.reset_in = seconds_ms(std::max(0.0, at - base_of_epoch(headers, now)));
        q.exact = true;
      } else {
        q.reset_in = seconds_ms(*r);
        q.exact = *r != static_cast<double>(static_cast<std::int64_t>(*r));
      }
    }
    return q;
  }
  // The LLM providers' requests bucket (OpenAI's, Azure's, Anthropic's names: provider_headers.hpp).
  if (const auto requests = read_provider_limits(headers, now).requests) {
    q.remaining = requests->remaining;
    q.limit = requests->limit;
    q.reset_in = requests->reset_in;
    q.exact = requests->reset_in.count() % 1000 != 0;
    return q;
  }
  return std::nullopt;
}

}  // namespace dibs::http
