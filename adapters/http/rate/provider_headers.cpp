#include "provider_headers.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <strings.h>

namespace dibs::http {

namespace {
const std::string* header_named(const header_list& headers, const std::string& name) {
  for (const auto& [k, v] : headers)
    if (::strcasecmp(k.c_str(), name.c_str()) == 0) return &v;
  return nullptr;
}

std::string_view stripped(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A decimal number at the front of `s` (digits, one '.', digits), consumed; nullopt when none.
std::optional<double> number_at_front(std::string_view& s) {
  std::size_t i = 0;
  bool digits = false, dot = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && !dot))) {
    if (s[i] == '.') dot = true;
    else digits = true;
    ++i;
  }
  if (!digits || i > 24) return std::nullopt;
  const double v = std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);
  s.remove_prefix(i);
  return v;
}

// A whole number, possibly negative ("-1": Azure's "not known").
std::optional<std::int64_t> whole_number(const std::string* v) {
  if (!v) return std::nullopt;
  const auto t = stripped(*v);
  if (t.empty() || t.size() > 19) return std::nullopt;
  std::size_t i = t.front() == '-' ? 1 : 0;
  if (i == t.size()) return std::nullopt;
  for (std::size_t j = i; j < t.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(t[j]))) return std::nullopt;
  return std::strtoll(std::string(t).c_str(), nullptr, 10);
}

std::chrono::milliseconds seconds_to_ms(double s) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(std::min(s, 1e9) * 1000.0)));
}

// The bucket named by the three headers `<limit>`, `<remaining>`, `<reset>`; `reset_of` reads a reset.
template <class ResetOf>
std::optional<provider_bucket> bucket_of(const header_list& h, const std::string& limit, const std::string& remaining,
                                      const std::string& reset, ResetOf reset_of) {
  const auto left = whole_number(header_named(h, remaining));
  if (!left || *left < 0) return std::nullopt;  // not said, or Azure's -1: nothing known
  provider_bucket b;
  b.remaining = *left;
  if (const auto l = whole_number(header_named(h, limit)); l && *l > 0) b.limit = *l;
  if (const auto* r = header_named(h, reset)) b.reset_in = reset_of(*r).value_or(std::chrono::milliseconds{0});
  return b;
}

// What is left of a bucket, as a share of its limit (its count when no limit is said).
double share_left(const provider_bucket& b) {
  return b.limit ? static_cast<double>(b.remaining) / static_cast<double>(*b.limit) : static_cast<double>(b.remaining);
}
}  // namespace

std::optional<std::chrono::milliseconds> go_duration(std::string_view text) {
  auto s = stripped(text);
  if (s.empty()) return std::nullopt;
  {  // a bare number: seconds
    auto t = s;
    if (const auto n = number_at_front(t); n && t.empty()) return seconds_to_ms(*n);
  }
  double seconds = 0;
  while (!s.empty()) {
    const auto n = number_at_front(s);
    if (!n) return std::nullopt;
    double unit = 0;
    if (s.substr(0, 2) == "ms") unit = 1e-3, s.remove_prefix(2);
    else if (s.substr(0, 2) == "us" || s.substr(0, 3) == "\xC2\xB5s") unit = 1e-6, s.remove_prefix(s.front() == 'u' ? 2 : 3);
    else if (s.substr(0, 2) == "ns") unit = 1e-9, s.remove_prefix(2);
    else if (!s.empty() && s.front() == 'h') unit = 3600, s.remove_prefix(1);
    else if (!s.empty() && s.front() == 'm') unit = 60, s.remove_prefix(1);
    else if (!s.empty() && s.front() == 's') unit = 1, s.remove_prefix(1);
    else return std::nullopt;
    seconds += *n * unit;
  }
  return seconds_to_ms(seconds);
}

std::optional<std::chrono::system_clock::time_point> rfc3339_time(std::string_view text) {
  const auto s = std::string(stripped(text));
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &consumed) != 6 || consumed < 19)
    return std::nullopt;
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  std::size_t i = static_cast<std::size_t>(consumed);
  double fraction = 0;
  if (i < s.size() && s[i] == '.') {
    std::size_t j = i + 1;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i + 1) return std::nullopt;
    fraction = std::strtod(("0" + s.substr(i, j - i)).c_str(), nullptr);
    i = j;
  }
  long offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    const int hh = std::atoi(s.substr(i + 1, 2).c_str()), mm = std::atoi(s.substr(i + 4, 2).c_str());
    offset = (s[i] == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  const auto at = static_cast<std::int64_t>(::timegm(&tm)) - offset;
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(at) + std::chrono::microseconds(std::llround(fraction * 1e6))));
}

provider_limits read_provider_limits(const header_list& headers, std::chrono::system_clock::time_point now) {
  provider_limits out;
  // OpenAI and Azure.
  for (const char* kind : {"requests", "tokens"}) {
    const std::string k = kind;
    auto b = bucket_of(headers, "x-ratelimit-limit-" + k, "x-ratelimit-remaining-" + k, "x-ratelimit-reset-" + k,
                    [](const std::string& v) { return go_duration(v); });
    if (b) (k == "requests" ? out.requests : out.tokens) = b;
  }
  if (out.any()) return out;
  // Anthropic: the reset is a time; the tokens the tightest of its three token buckets.
  const auto until = [now](const std::string& v) -> std::optional<std::chrono::milliseconds> {
    const auto at = rfc3339_time(v);
    if (!at) return std::nullopt;
    return std::max(std::chrono::milliseconds{0}, std::chrono::ceil<std::chrono::milliseconds>(*at - now));
  };
  const auto anthropic = [&](const std::string& kind) {
    const std::string p = "anthropic-ratelimit-" + kind + "-";
    return bucket_of(headers, p + "limit", p + "remaining", p + "reset", until);
  };
  out.requests = anthropic("requests");
  out.input_tokens = anthropic("input-tokens");
  out.output_tokens = anthropic("output-tokens");
  for (const auto* b : {&out.input_tokens, &out.output_tokens})
    if (*b && (!out.tokens || share_left(**b) < share_left(*out.tokens))) out.tokens = *b;
  if (auto b = anthropic("tokens"); b && (!out.tokens || share_left(*b) < share_left(*out.tokens))) out.tokens = b;
  return out;
}

std::optional<provider_bucket> whole_tokens_at_mix(const provider_bucket& input, const provider_bucket& output, double input_share) {
  if (!(input_share > 0.001 && input_share < 0.999)) return std::nullopt;
  // The same limit (or none stated) and the same remaining under both names: one bucket metering input and output
  // together (a server in Anthropic's dialect with one token limit), every whole token of a
  // request taken from it. Read at the mix it would hold 1/max(share) times what is left (1.5
  // times at 0.65 input: a walkthrough's requests were refused). Two buckets that happen to read
  // alike are then held to the one, for that reading: a level lower, never a request refused.
  if (input.limit == output.limit && input.remaining == output.remaining)
    return provider_bucket{input.limit, input.remaining, std::max(input.reset_in, output.reset_in)};
  const double out_share = 1 - input_share;
  // A request of c whole tokens takes c * input_share of the input bucket and c * out_share of
  // the output one: each bucket holds room for its amount over its share, the smaller binds.
  const auto whole = [](std::int64_t n, double share) { return static_cast<std::int64_t>(static_cast<double>(n) / share); };
  provider_bucket b;
  b.remaining = std::min(whole(std::max<std::int64_t>(input.remaining, 0), input_share),
                         whole(std::max<std::int64_t>(output.remaining, 0), out_share));
  if (input.limit && output.limit) b.limit = std::min(whole(*input.limit, input_share), whole(*output.limit, out_share));
  b.reset_in = std::max(input.reset_in, output.reset_in);
  return b;
}

std::optional<std::chrono::milliseconds> retry_after_ms(const header_list& headers) {
  const auto* v = header_named(headers, "retry-after-ms");
  if (!v) return std::nullopt;
  auto t = stripped(*v);
  const auto n = number_at_front(t);
  if (!n || !t.empty()) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(std::min(*n, 1e12))));
}

std::optional<std::chrono::milliseconds> gemini_retry_delay(std::string_view body) {
  if (body.empty() || body.size() > (1u << 20)) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc)) return std::nullopt;
  simdjson::dom::array details;
  if (doc["error"]["details"].get(details)) return std::nullopt;
  for (auto d : details) {
    std::string_view type, delay;
    if (d["@type"].get(type) || type.size() < 20 || type.substr(type.size() - 20) != "google.rpc.RetryInfo") continue;
    if (d["retryDelay"].get(delay)) continue;
    if (delay.empty() || delay.back() != 's') continue;  // google.protobuf.Duration: "<seconds>s"
    auto t = delay.substr(0, delay.size() - 1);
    const auto n = number_at_front(t);
    if (n && t.empty()) return seconds_to_ms(*n);
  }
  return std::nullopt;
}

namespace {
// error.message of an OpenAI-shaped error body ("" when there is none).
std::string error_message(std::string_view body) {
  if (body.empty() || body.size() > (1u << 20)) return {};
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view message;
  if (parser.parse(body.data(), body.size()).get(doc) || doc["error"]["message"].get(message)) return {};
  return std::string(message);
}
}  // namespace

std::optional<std::chrono::milliseconds> body_retry_delay(std::string_view body) {
  if (auto gemini = gemini_retry_delay(body)) return gemini;
  const auto message = error_message(body);
  static constexpr std::string_view said = "try again in ";
  const auto at = message.find(said);
  if (at == std::string::npos) return std::nullopt;
  auto duration = std::string_view(message).substr(at + said.size());
  duration = duration.substr(0, duration.find(' '));
  if (!duration.empty() && duration.back() == '.') duration.remove_suffix(1);  // the sentence's full stop
  return go_duration(duration);
}

bool never_fits_the_limit(std::string_view body) { return error_message(body).rfind("Request too large for ", 0) == 0; }

}  // namespace dibs::http
