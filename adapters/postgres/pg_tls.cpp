#include "pg_tls.hpp"

#include <cstdlib>
#include <sys/stat.h>

namespace dibs::pg {

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// host[:port] or [v6]:port -> host
std::string without_port(std::string_view hp) {
  if (!hp.empty() && hp.front() == '[') {
    const auto close = hp.find(']');
    return std::string(close == std::string_view::npos ? hp.substr(1) : hp.substr(1, close - 1));
  }
  return std::string(hp.substr(0, hp.find(':')));
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const auto next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

std::vector<std::pair<std::string, std::string>> query_params(std::string_view uri) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto q = uri.find('?');
  if (q == std::string_view::npos) return out;
  for (auto kv : split(uri.substr(q + 1), '&')) {
    const auto eq = kv.find('=');
    out.emplace_back(lower(kv.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
  }
  return out;
}
}  // namespace

std::vector<std::string> uri_hosts(std::string_view uri) {
  std::vector<std::string> out;
  const auto scheme = uri.find("://");
  if (scheme == std::string_view::npos) return out;
  const auto start = scheme + 3;
  const auto q = std::min(uri.find('?', start), uri.size());
  // The password may hold an unencoded '/' or '@': the hosts start after the last '@'.
  const auto at = uri.rfind('@', q);
  const auto host_start = at != std::string_view::npos && at >= start ? at + 1 : start;
  const auto host_end = std::min(uri.find_first_of("/?", host_start), uri.size());
  for (auto hp : split(uri.substr(host_start, host_end - host_start), ',')) out.push_back(without_port(hp));
  for (const auto& [k, v] : query_params(uri))
    if (k == "host" || k == "hostaddr")
      for (auto h : split(v, ',')) out.emplace_back(h);
  return out;
}

bool is_local_host(std::string_view host) {
  if (host.empty() || host.front() == '/' || lower(host.substr(0, 3)) == "%2f") return true;  // a Unix socket
  const auto h = lower(host);
  if (h == "localhost" || h == "::1" || h == "[::1]") return true;
  // 127.0.0.0/8, written as a dotted quad
  if (h.rfind("127.", 0) != 0) return false;
  int dots = 0;
  for (const char c : h) {
    if (c == '.') ++dots;
    else if (c < '0' || c > '9') return false;
  }
  return dots == 3;
}

tls_environment current_tls_environment() {
  tls_environment env;
  const char* mode = std::getenv("PGSSLMODE");
  env.sslmode_set = mode && *mode;
  const char* root = std::getenv("PGSSLROOTCERT");
  env.own_root_cert = root && *root;
  if (const char* home = std::getenv("HOME"); !env.own_root_cert && home && *home) {
    struct stat st{};
    env.own_root_cert = ::stat((std::string(home) + "/.postgresql/root.crt").c_str(), &st) == 0;
  }
  return env;
}

std::string with_tls_default(const std::string& uri, const tls_environment& env) {
  if (env.sslmode_set) return uri;
  bool root_given = env.own_root_cert;
  for (const auto& [k, v] : query_params(uri)) {
    if (k == "sslmode" || k == "requiressl") return uri;
    if (k == "sslrootcert") root_given = true;
  }
  bool remote = false;
  for (const auto& h : uri_hosts(uri)) remote = remote || !is_local_host(h);
  if (!remote) return uri;
  std::string out = uri + (uri.find('?') == std::string::npos ? "?" : "&") + "sslmode=verify-full";
  if (!root_given) out += std::string("&sslrootcert=") + system_ca_bundle;
  return out;
}

}  // namespace dibs::pg
