#include "mysql_uri.hpp"

#include <dibs/uri_redact.hpp>

#include <charconv>
#include <stdexcept>

namespace dibs::sql {

namespace {
std::string decode(const std::string& s, const std::string& what, const std::string& shown) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      unsigned v = 0;
      if (i + 2 >= s.size())
        throw std::invalid_argument("bad --store '" + shown + "': broken %-escape in the " + what);
      auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      if (ec != std::errc{} || p != s.data() + i + 3)
        throw std::invalid_argument("bad --store '" + shown + "': broken %-escape in the " + what);
      out += static_cast<char>(v);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}
}  // namespace

mysql_uri parse_mysql_uri(const std::string& text) {
  const std::string shown = redact_uri(text);
  auto bad = [&](const std::string& why) { throw std::invalid_argument("bad --store '" + shown + "': " + why); };
  const std::string scheme = "mysql://";
  if (text.compare(0, scheme.size(), scheme) != 0) bad("expected mysql://USER:PASSWORD@HOST:PORT/DATABASE?table=TABLE");
  mysql_uri u;
  std::string rest = text.substr(scheme.size());
  std::string query;
  if (auto qm = rest.find('?'); qm != std::string::npos) {
    query = rest.substr(qm + 1);
    rest = rest.substr(0, qm);
  }
  const auto slash = rest.find('/');
  if (slash == std::string::npos || slash + 1 == rest.size()) bad("no database: add /DATABASE after the host");
  u.database = decode(rest.substr(slash + 1), "database", shown);
  std::string authority = rest.substr(0, slash);
  if (auto at = authority.rfind('@'); at != std::string::npos) {
    const std::string userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const auto colon = userinfo.find(':');
    u.user = decode(userinfo.substr(0, colon), "user", shown);
    if (colon != std::string::npos) u.password = decode(userinfo.substr(colon + 1), "password", shown);
  }
  if (!authority.empty()) {
    const auto colon = authority.rfind(':');
    if (colon != std::string::npos) {
      const std::string port = authority.substr(colon + 1);
      unsigned v = 0;
      auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
      if (ec != std::errc{} || p != port.data() + port.size() || v == 0 || v > 65535)
        // Not echoed when the URI holds a secret: with an unencoded '/' in the password, the "port"
        // is a piece of it (found by fuzzing).
        bad(shown == text ? "port '" + port + "' is not a number from 1 to 65535"
                          : "the port is not a number from 1 to 65535 (percent-encode '/', '?' and '@' in the password)");
      u.port = static_cast<std::uint16_t>(v);
      authority = authority.substr(0, colon);
    }
    if (!authority.empty()) u.host = authority;
  }
  std::size_t start = 0;
  while (start < query.size()) {
    auto amp = query.find('&', start);
    if (amp == std::string::npos) amp = query.size();
    const std::string kv = query.substr(start, amp - start);
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : decode(kv.substr(eq + 1), key, shown);
    if (key == "table") u.table = value;
    else if (key == "socket") u.socket = value;
    else if (!key.empty())
      // Named only when it is a plain word: a password with an unencoded '?' lands here, and
      // must not be echoed (found by fuzzing).
      bad(shown == text && key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == std::string::npos
              ? "unknown option '" + key + "' (known: table, socket)"
              : "an unknown option (known: table, socket; percent-encode '?', '/' and '@' in the password)");
    start = amp + 1;
  }
  if (u.table.empty()) bad("empty table name");
  return u;
}

}  // namespace dibs::sql
