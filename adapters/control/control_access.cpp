#include "control_access.hpp"

#include <dibs/setting_error.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <random>

namespace dibs::http {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

struct host_port {
  std::string host;               // lower case; an IPv6 address keeps its brackets
  std::optional<unsigned> port;   // absent when not given
  bool ok = false;
};

// "name", "name:8080", "1.2.3.4:80", "[::1]:9100".
host_port split(std::string_view text) {
  host_port hp;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return hp;
    hp.host = lower(text.substr(0, close + 1));
    const auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return hp;
      port = rest.substr(1);
      if (port.empty()) return hp;
    }
  } else {
    const auto colon = text.find(':');
    if (colon != std::string_view::npos) {
      if (text.find(':', colon + 1) != std::string_view::npos) return hp;  // an unbracketed IPv6 address
      port = text.substr(colon + 1);
      if (port.empty()) return hp;
    }
    hp.host = lower(text.substr(0, colon));
  }
  if (hp.host.empty()) return hp;
  if (!port.empty()) {
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
    if (ec != std::errc{} || p != port.data() + port.size() || v > 65535) return hp;
    hp.port = v;
  }
  hp.ok = true;
  return hp;
}

bool is_extra(const control_access& a, const std::string& host) {
  return std::any_of(a.extra_hosts.begin(), a.extra_hosts.end(), [&](const std::string& h) { return lower(h) == host; });
}

// An IP address written as a Host: dotted IPv4 or a bracketed IPv6, not an unspecified one.
bool is_ip_literal(const std::string& host) {
  if (host == "0.0.0.0" || host == "[::]") return false;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    return host.find_first_not_of("0123456789abcdef:.", 1) == host.size() - 1;
  int dots = 0, digits = 0;
  for (const char c : host) {
    if (c == '.') {
      if (digits == 0) return false;
      ++dots, digits = 0;
    } else if (c >= '0' && c <= '9' && ++digits <= 3) {
    } else {
      return false;
    }
  }
  return dots == 3 && digits > 0;
}

// Compares every byte whatever the first difference (no timing hint, cheap enough).
bool same_token(std::string_view given, std::string_view expected) {
  if (given.size() != expected.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < given.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ expected[i]);
  return diff == 0;
}

bool is_own(const control_access& a, const std::string& host) {
  if (host == "localhost" || host == "127.0.0.1" || host == "[::1]") return true;
  const std::string listen = lower(a.listen_address);
  if (listen.empty()) return false;
  if (listen == "0.0.0.0" || listen == "::") return is_ip_literal(host);  // names must be added
  return host == (listen.find(':') != std::string::npos ? "[" + listen + "]" : listen);
}

}  // namespace

bool control_access::host_allowed(std::string_view host_header) const {
  const auto hp = split(host_header);
  if (!hp.ok) return false;
  if (is_extra(*this, hp.host)) return true;  // behind a proxy: its port, whatever it is
  return is_own(*this, hp.host) && (!hp.port || *hp.port == port);
}

bool control_access::origin_allowed(std::string_view origin) const {
  bool https = false;
  if (origin.rfind("http://", 0) == 0) origin.remove_prefix(7);
  else if (origin.rfind("https://", 0) == 0) origin.remove_prefix(8), https = true;
  else return false;  // "null" (a sandboxed frame, a file: page) and anything odd
  if (origin.find('/') != std::string_view::npos) return false;
  const auto hp = split(origin);
  if (!hp.ok) return false;
  if (is_extra(*this, hp.host)) return true;
  return !https && is_own(*this, hp.host) && hp.port.value_or(80) == port;
}

std::optional<refusal> check_control_request(const control_access& access, const control_request& r) {
  if (!access.host_allowed(r.host))
    return refusal{421, "the Host header names no address of these controls (to reach them through a proxy, add "
                        "the name it forwards to the allowed hosts)"};
  if (!r.is_post) return std::nullopt;
  if (access.posts_from_loopback_only && !r.peer_is_loopback)
    return refusal{403, "a POST is taken from this host only (the metrics address opens GET /metrics and "
                        "GET /status to the network, not the controls)"};
  if (r.origin && !access.origin_allowed(*r.origin)) return refusal{403, "a POST from another site's page"};
  if (r.token) {  // the page's buttons: a browser, which always sends Origin with a POST
    if (!r.origin) return refusal{403, "the page's token (X-Dibs-Token) is taken only from the page, with its Origin"};
    if (access.token.empty() || !same_token(*r.token, access.token))
      return refusal{403, "the page's token is not this process's (a page of an earlier run?): reload the page"};
    return std::nullopt;
  }
  // A program's key. Another scheme (a proxy's Basic credentials passed on) is not ours to judge.
  if (r.authorization && lower(r.authorization->substr(0, 7)) == "bearer ") {
    if (access.key.empty())
      return refusal{401, "these controls were given no key, so no program's POST is taken (dibs: " +
                              setting_name("control_key_file") + " FILE or DIBS_CONTROL_KEY)"};
    if (!same_token(r.authorization->substr(7), access.key))
      return refusal{401, "the header Authorization does not carry the controls' key"};
    return std::nullopt;
  }
  if (r.origin) return refusal{403, "a POST from a browser needs the page's token (header X-Dibs-Token): reload the page"};
  if (access.key.empty())
    return refusal{401, "these controls were given no key, so no program's POST is taken (dibs: " +
                            setting_name("control_key_file") +
                            " FILE or DIBS_CONTROL_KEY, then the header Authorization: Bearer KEY); "
                            "the dashboard's buttons work from this host"};
  return refusal{401, "a POST needs the controls' key: the header Authorization: Bearer KEY (dibs: the key of " +
                          setting_name("control_key_file") + " or DIBS_CONTROL_KEY)"};
}

std::string make_control_token() {
  std::random_device rd;  // the kernel's randomness: the token must not be guessable
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t v = rd();
    for (int k = 0; k < 8; ++k, v >>= 4) out += hex[v & 0xf];
  }
  return out;
}

std::string control_key_problem(std::string_view key) {
  if (key.size() < 16) return "is shorter than 16 characters";
  for (const unsigned char c : key)
    if (c <= 0x20 || c >= 0x7f) return "holds a space, a control character or non-ASCII (it travels in a header)";
  return {};
}

}  // namespace dibs::http
