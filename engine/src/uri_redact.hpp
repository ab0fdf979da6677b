// Connection strings without their secrets, for logs, summaries and error messages:
//   "mongodb://user:secret@host/db"                  -> "mongodb://user:***@host/db"
//   "mongodb://h/?tlsCertificateKeyFilePassword=x"   -> "mongodb://h/?tlsCertificateKeyFilePassword=***"
//   "mysql://app:S3cret/db" (the '@' forgotten)      -> "mysql://app:***/db"
// and a driver's message about such a string without any piece of those secrets.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dibs {

// A query option whose value is a secret: any name holding "pass" (password, passphrase, passwd),
// "pwd", "secret", "token", "key" or "credential" (case-insensitive), and MongoDB's
// authMechanismProperties (whole value: it carries AWS_SESSION_TOKEN). Key FILE names are masked
// too: a path is no secret, but telling them apart by name is guesswork.
inline bool is_secret_uri_option(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"pass", "pwd", "secret", "token", "key", "credential", "authmechanismproperties"})
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

namespace detail {

using span = std::pair<std::size_t, std::size_t>;  // [begin, end) of a secret in the URI

inline bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The secret parts of `uri`, in order, not overlapping.
inline std::vector<span> secret_spans(const std::string& uri) {
  std::vector<span> out;
  const auto scheme = uri.find("://");
  if (scheme == std::string::npos) return out;
  const auto start = scheme + 3;
  std::size_t query_from = start;
  // The password runs to the LAST '@': it may hold an unencoded '/', '?' or '@' (fuzzing found
  // "user:pa/ss@host" shown whole when the authority was cut at the first '/'). Hiding too much
  // of an odd URI is the safe way to be wrong.
  const auto at = uri.rfind('@');
  std::size_t host_from = start;
  if (at != std::string::npos && at >= start) {
    const auto colon = uri.find(':', start);
    if (colon != std::string::npos && colon < at) {
      out.emplace_back(colon + 1, at);
      host_from = query_from = at + 1;
    } else if (at < std::min(uri.find_first_of("/?#", start), uri.size())) {
      host_from = query_from = at + 1;  // a user name without a password
    }  // (else the '@' sits in the path or query: "?authMechanismProperties=...&x=a@b")
  }
  {
    // "user:password/db" (the '@' forgotten) reads as host:port with a port that is no number.
    // Any host:port whose port is not digits is taken for a password: everything after the
    // first ':' of the hosts is hidden ("h1:27017,h2:27017" and "[::1]:3306" stay readable).
    const auto end = std::min(uri.find_first_of("/?#", host_from), uri.size());
    const std::string_view authority(uri.data() + host_from, end - host_from);
    bool odd = false;
    for (std::size_t s = 0; s <= authority.size() && !odd;) {
      const auto comma = std::min(authority.find(',', s), authority.size());
      const auto host_port = authority.substr(s, comma - s);
      std::string_view port;
      if (!host_port.empty() && host_port.front() == '[') {  // [v6 address]:port
        const auto close = host_port.find(']');
        if (close == std::string_view::npos) odd = true;
        else if (close + 1 < host_port.size()) {
          if (host_port[close + 1] != ':') odd = true;
          port = host_port.substr(close + 2);
        }
      } else if (const auto colon = host_port.find(':'); colon != std::string_view::npos) {
        port = host_port.substr(colon + 1);
      }
      if (!port.empty() && !all_digits(port)) odd = true;
      s = comma + 1;
    }
    if (const auto colon = authority.find(':'); odd && colon != std::string_view::npos)
      out.emplace_back(host_from + colon + 1, end);
    query_from = std::max(query_from, end);
  }
  // Query options whose name says they hold a secret: their values. ('&' and ';' both separate
  // options in MongoDB URIs.)
  const auto q = uri.find('?', query_from);
  if (q == std::string::npos) return out;
  const auto end = std::min(uri.find('#', q), uri.size());
  for (std::size_t s = q + 1; s < end;) {
    const auto sep = std::min(uri.find_first_of("&;", s), end);
    const std::string_view kv(uri.data() + s, sep - s);
    const auto eq = kv.find('=');
    if (eq != std::string_view::npos && eq + 1 < kv.size() && is_secret_uri_option(kv.substr(0, eq)))
      out.emplace_back(s + eq + 1, sep);
    s = sep + 1;
  }
  return out;
}

inline std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned v = 0;
    if (s[i] == '%' && i + 3 <= s.size() &&
        std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr == s.data() + i + 3) {
      out += static_cast<char>(v);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace detail

inline std::string redact_uri(const std::string& uri) {
  std::string out;
  std::size_t from = 0;
  for (const auto& [b, e] : detail::secret_spans(uri)) {
    out.append(uri, from, b - from).append("***");
    from = e;
  }
  return out.append(uri, from);
}

// An API's URL (url, batch_url: the template, or a request made from it) as messages show
// it: every query value masked, whatever its parameter is called (an API may name its key
// `key`, `auth`, `appid`, `sig`, `access_key`...: telling them apart by name misses some), and
// a fragment, and a password in the user info: "https://api/x/{ip}?fields=a,b&key=K" becomes
// "https://api/x/{ip}?fields=***&key=***" ("?KEY" alone: "?***"). A value that is one whole
// {field} placeholder of a template stays: it says where the item's value goes, and is no
// secret. A key in the PATH can't be told from the rest of the path: messages show it (give
// such a URL in a file or the environment, so that at least `ps` does not).
inline std::string redact_api_url(const std::string& url) {
  std::string out = url;
  if (const auto scheme = out.find("://"); scheme != std::string::npos) {
    const auto start = scheme + 3;
    // To the last '@' before the query: a password may hold an unencoded '/' (over-masking an
    // odd URL is the safe way to be wrong).
    const auto end = std::min(out.find_first_of("?#", start), out.size());
    const auto at = out.rfind('@', end);
    const auto colon = out.find(':', start);
    if (at != std::string::npos && at >= start && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  const auto hash = out.find('#');
  const auto q = std::min(out.find('?'), hash);  // a '?' in the fragment starts no query
  std::string masked = out.substr(0, q);
  if (q < hash) {
    const std::string_view query(out.data() + q + 1, std::min(hash, out.size()) - q - 1);
    masked += '?';
    for (std::size_t s = 0; s <= query.size();) {
      const auto sep = std::min(query.find('&', s), query.size());
      const auto kv = query.substr(s, sep - s);
      const auto eq = kv.find('=');  // none: the whole part is a value ("?KEY")
      const auto name = eq == std::string_view::npos ? std::string_view() : kv.substr(0, eq + 1);
      const auto value = kv.substr(name.size());
      const bool placeholder = value.size() > 2 && value.front() == '{' && value.back() == '}' &&
                               value.find_first_of("{}", 1) == value.size() - 1;
      masked += value.empty() || placeholder ? std::string(kv) : std::string(name) + "***";
      if (sep < query.size()) masked += '&';
      s = sep + 1;
    }
  }
  if (hash != std::string::npos) masked += "#***";
  return masked;
}

// A driver's message about `uri` (mongoc quotes a bad password or option value in its parse
// errors, and truncates long messages), withheld whole when it holds any 4 characters in a row
// of a secret of `uri` as typed or percent-decoded (all of a shorter secret): a message that
// shows a piece of one is not worth the risk.
inline std::string redact_driver_message(const std::string& message, const std::string& uri) {
  for (const auto& [b, e] : detail::secret_spans(uri)) {
    const std::string raw = uri.substr(b, e - b);
    for (const auto& secret : {raw, detail::percent_decoded(raw)}) {
      const std::size_t w = std::min<std::size_t>(secret.size(), 4);
      for (std::size_t i = 0; w > 0 && i + w <= secret.size(); ++i)
        if (message.find(secret.substr(i, w)) != std::string::npos)
          return "(the driver's message is withheld: it quotes a secret part of the connection string)";
    }
  }
  return message;
}

}  // namespace dibs
