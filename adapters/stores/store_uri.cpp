#include <dibs/stores/store_uri.hpp>

#include <adapters/mysql/mysql_uri.hpp>

#include <dibs/setting_error.hpp>
#include "engine/src/uri_redact.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>
#include <vector>

namespace dibs {

namespace {

// Which store a URI names, by its beginning. A new store adds its row here (and its case in
// open_store.cpp).
struct scheme_row {
  std::string_view prefix;
  store_kind kind;
};
constexpr scheme_row schemes[] = {
    {"mongodb://", store_kind::mongodb},
    {"mongodb+srv://", store_kind::mongodb},
    {"mysql://", store_kind::mysql},
    {"postgresql://", store_kind::postgresql},
    {"postgres://", store_kind::postgresql},
    {"jsonl:", store_kind::jsonl},
};

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw setting_error("store", "'" + redact_uri(text) + "': " + why);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

// %XX escapes decoded; false for a broken one.
bool percent_decode(std::string_view s, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 3 > s.size() || std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3)
      return false;
    out += static_cast<char>(v);
    i += 2;
  }
  return true;
}

// Cuts a network URI around its host list: the user information ends at the last '@' before the
// query (a password may hold an unencoded '/'; the driver refuses what it can't read, and this
// only has to find where the hosts are).
void split_hosts(store_uri& u, std::size_t after_scheme) {
  const auto& t = u.text;
  const auto query = std::min(t.find('?', after_scheme), t.size());
  auto hosts_from = after_scheme;
  if (const auto at = t.rfind('@', query == 0 ? 0 : query - 1); at != std::string::npos && at >= after_scheme)
    hosts_from = at + 1;
  const auto hosts_to = std::min(t.find_first_of("/?", hosts_from), t.size());
  u.before_hosts = t.substr(0, hosts_from);
  u.hosts = t.substr(hosts_from, hosts_to - hosts_from);
  u.after_hosts = t.substr(hosts_to);
  // The first host and its port: "h", "h:27017", "[::1]:27017".
  const std::string first = u.hosts.substr(0, u.hosts.find(','));
  auto colon = first.rfind(':');
  if (!first.empty() && first.front() == '[' && (colon == std::string::npos || colon < first.find(']')))
    colon = std::string::npos;
  u.host = first.substr(0, colon);
  if (colon != std::string::npos) {
    unsigned v = 0;
    const auto* end = first.data() + first.size();
    if (auto [p, ec] = std::from_chars(first.data() + colon + 1, end, v); ec == std::errc{} && p == end && v <= 65535)
      u.port = static_cast<std::uint16_t>(v);
  }
}

// mongodb: the path is the database; collection= is dibs's, the driver gets every other option.
void parse_mongodb(store_uri& u) {
  const auto& tail = u.after_hosts;  // "", "/", "/db", "/db?opts", "?opts"
  const auto query = std::min(tail.find('?'), tail.size());
  if (query > 0 && !percent_decode(std::string_view(tail).substr(1, query - 1), u.database))
    bad(u.text, "broken %-escape in the database name");
  std::string kept;
  for (std::size_t s = query + 1; s < tail.size();) {
    const auto sep = std::min(tail.find_first_of("&;", s), tail.size());
    const std::string_view option(tail.data() + s, sep - s);
    const auto eq = option.find('=');
    if (eq != std::string_view::npos && iequals(option.substr(0, eq), "collection")) {
      if (!percent_decode(option.substr(eq + 1), u.collection)) bad(u.text, "broken %-escape in collection=");
      if (u.collection.empty()) bad(u.text, "collection= names no collection");
    } else if (!option.empty()) {
      kept += std::string(kept.empty() ? "?" : "&") + std::string(option);
    }
    s = sep + 1;
  }
  u.driver_uri = u.before_hosts + u.hosts + tail.substr(0, query) + kept;
}

// Edits (insert, delete, substitute) between two short names, case aside.
std::size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The URI the user probably meant when no scheme fits `text` ("" when none is likely): its scheme
// a letter or two off one of ours (mysq://, postgressql://, mongo://), or a bare file name
// (customers.jsonl, ./data/in.json) that wants jsonl: before it.
std::string likely_meant(const std::string& text) {
  const auto sep = text.find("://");
  if (sep != std::string::npos && sep > 0) {
    const std::string_view typed(text.data(), sep);
    std::string_view best;
    std::size_t best_edits = 3;
    for (const auto& r : schemes) {
      const auto name = r.prefix.substr(0, r.prefix.find(':'));
      if (r.prefix.find("://") == std::string_view::npos) continue;
      if (const auto e = edits(typed, name); e < best_edits) {
        best_edits = e;
        best = name;
      }
    }
    return best.empty() ? "" : std::string(best) + text.substr(sep);
  }
  const auto colon = text.find(':');
  if (colon != std::string::npos && colon < text.find('/')) {  // "jsnl:in.jsonl"
    const std::string_view typed(text.data(), colon);
    return edits(typed, "jsonl") <= 2 ? "jsonl:" + text.substr(colon + 1) : "";
  }
  const auto dot = text.rfind('.');
  const auto ext = dot == std::string::npos ? std::string() : text.substr(dot + 1);
  for (const char* file : {"jsonl", "json", "ndjson", "jsonlines", "txt", "log"})
    if (iequals(ext, file)) return "jsonl:" + text;
  return text.find('/') != std::string::npos ? "jsonl:" + text : "";
}

}  // namespace

const char* to_string(store_kind k) {
  switch (k) {
    case store_kind::mongodb: return "mongodb";
    case store_kind::mysql: return "mysql";
    case store_kind::postgresql: return "postgresql";
    case store_kind::jsonl: return "jsonl";
  }
  return "?";
}

const char* store_uri_grammar() {
  return "mongodb://HOST[:PORT]/DB?collection=COLLECTION, mysql://USER:PASS@HOST:PORT/DB?table=TABLE, "
         "postgresql://USER:PASS@HOST:PORT/DB?table=TABLE or jsonl:IN.jsonl";
}

std::string store_uri::with_hosts(const std::string& host_port) const { return before_hosts + host_port + after_hosts; }

store_uri parse_store_uri(const std::string& text) {
  const auto row = std::find_if(std::begin(schemes), std::end(schemes),
                                [&](const scheme_row& r) { return text.compare(0, r.prefix.size(), r.prefix) == 0; });
  if (row == std::end(schemes)) {
    const auto meant = likely_meant(text);
    bad(text, (meant.empty() ? std::string() : "did you mean '" + redact_uri(meant) + "'? ") + "expected " + store_uri_grammar());
  }
  store_uri u;
  u.kind = row->kind;
  u.text = u.driver_uri = text;
  switch (u.kind) {
    case store_kind::jsonl:
      u.path = text.substr(row->prefix.size());
      if (u.path.empty()) bad(text, "no path (jsonl:IN.jsonl)");
      break;
    case store_kind::mongodb:
      split_hosts(u, row->prefix.size());
      if (u.hosts.empty()) bad(text, "no host");
      parse_mongodb(u);
      break;
    case store_kind::postgresql:
      // libpq reads the rest (and the PostgreSQL adapter takes table= out): only the hosts are
      // cut here, so that a copy can point elsewhere.
      split_hosts(u, row->prefix.size());
      break;
    case store_kind::mysql: {
      const auto m = mysql::parse_mysql_uri(text);  // the MySQL adapter's own reading of its options
      split_hosts(u, row->prefix.size());
      u.host = m.host;
      u.port = m.port;
      u.database = m.database;
      u.collection = m.table;
      break;
    }
  }
  return u;
}

}  // namespace dibs
