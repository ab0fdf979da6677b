#include <dibs/http/url_template.hpp>

#include "engine/src/percent_encoding.hpp"
#include "engine/src/uri_redact.hpp"

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace dibs::http {

std::string percent_encode(std::string_view value) { return percent_encoded(value); }

url_template url_template::parse(const std::string& text, const std::string& setting) {
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument("bad " + setting + " '" + redact_api_url(text) + "': " + why);
  };
  url_template t;
  t.text_ = text;

  const auto scheme_end = text.find("://");
  if (scheme_end == std::string::npos) bad("expected http(s)://HOST[:PORT]/PATH");
  t.scheme_ = text.substr(0, scheme_end);
  std::transform(t.scheme_.begin(), t.scheme_.end(), t.scheme_.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t.scheme_ != "http" && t.scheme_ != "https") bad("unsupported scheme '" + t.scheme_ + "' (http or https)");

  const auto authority_start = scheme_end + 3;
  auto path_start = text.find_first_of("/?", authority_start);
  if (path_start == std::string::npos) path_start = text.size();
  const std::string authority = text.substr(authority_start, path_start - authority_start);
  if (authority.find_first_of("{}") != std::string::npos) bad("a {field} may not stand in the host or port");
  if (authority.find('@') != std::string::npos) bad("user info in the URL is not supported");
  if (authority.empty()) bad("no host");

  std::string host = authority;
  std::string port_text;
  if (authority.front() == '[') {  // [IPv6]:port
    const auto close = authority.find(']');
    if (close == std::string::npos) bad("unclosed '[' in the host");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') bad("junk after ']'");
      port_text = authority.substr(close + 2);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
  }
  if (host.empty()) bad("no host");
  t.host_ = host;
  t.port_ = t.scheme_ == "https" ? 443 : 80;
  if (!port_text.empty()) {
    unsigned port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || p != port_text.data() + port_text.size() || port == 0 || port > 65535)
      bad("port '" + port_text + "' is not a number from 1 to 65535");
    t.port_ = static_cast<std::uint16_t>(port);
  }

  std::string target = text.substr(path_start);
  if (target.empty() || target.front() == '?') target.insert(target.begin(), '/');
  if (target.find('#') != std::string::npos) bad("a fragment (#) is never sent; remove it");

  std::size_t i = 0;
  while (i < target.size()) {
    const auto open = target.find('{', i);
    const auto stray_close = target.find('}', i);
    if (stray_close != std::string::npos && (open == std::string::npos || stray_close < open))
      bad("'}' without '{'");
    if (open == std::string::npos) {
      t.pieces_.push_back({false, target.substr(i)});
      break;
    }
    if (open > i) t.pieces_.push_back({false, target.substr(i, open - i)});
    const auto close = target.find('}', open);
    if (close == std::string::npos) bad("unclosed '{'");
    std::string name = target.substr(open + 1, close - open - 1);
    if (name.empty()) bad("empty {} placeholder");
    if (name.find('{') != std::string::npos) bad("nested '{'");
    if (std::find(t.field_names_.begin(), t.field_names_.end(), name) == t.field_names_.end())
      t.field_names_.push_back(name);
    t.pieces_.push_back({true, std::move(name)});
    i = close + 1;
  }
  for (const auto& p : t.pieces_)
    if (!p.is_field)
      for (unsigned char c : p.text)
        if (c <= 0x20 || c >= 0x7f) bad("spaces and non-ASCII must be percent-encoded in the template");
  // The template's own path may not have dot segments either: a proxy would resolve them.
  const auto path = std::string_view(target).substr(0, std::min(target.find('?'), target.size()));
  for (std::size_t start = 0; start <= path.size();) {
    auto slash = std::min(path.find('/', start), path.size());
    const auto segment = path.substr(start, slash - start);
    if (segment == "." || segment == "..") bad("the path may not have a '.' or '..' segment");
    start = slash + 1;
  }
  return t;
}

source_text source_field(const job& j, const std::string& name, std::size_t max_bytes) {
  const auto* f = j.field(name);
  if (!f || f->st == job_field::state::missing) return {{}, "source field '" + name + "' is missing"};
  if (f->st == job_field::state::not_string)
    return {{}, "source field '" + name + "' is not a string (it is " + f->type_name + ")"};
  if (f->value.empty()) return {{}, "source field '" + name + "' is an empty string"};
  if (f->value.size() > max_bytes)
    return {{}, "source field '" + name + "' is " + std::to_string(f->value.size()) + " bytes long, more than the " +
                    std::to_string(max_bytes) + " a value may have"};
  return {f->value, {}};
}

namespace {
bool dot_segment(std::string_view segment) { return segment == "." || segment == ".."; }
}  // namespace

url_template::expansion url_template::expand(const job& j) const {
  expansion e;
  // Where each field's value landed in the path, to name it when it makes a dot segment.
  struct placed {
    std::size_t begin, end;
    const std::string* name;
  };
  boost::container::small_vector<placed, 4> in_path;  // no allocation per request for a few fields
  bool in_query = false;
  for (const auto& p : pieces_) {
    if (!p.is_field) {
      e.target += p.text;
      in_query = in_query || p.text.find('?') != std::string::npos;
      continue;
    }
    auto f = source_field(j, p.text, max_value_bytes_);
    if (!f.error.empty()) {
      e.error = std::move(f.error);
      return e;
    }
    const auto begin = e.target.size();
    e.target += percent_encode(f.value);
    if (!in_query) in_path.push_back({begin, e.target.size(), &p.text});
  }
  // A value "." or ".." as a whole path segment stays as it is after percent-encoding ('.' is
  // unreserved), and a proxy or server that normalises the path resolves it: /lookup/..?key=K
  // becomes /?key=K. Such a value is refused, never sent.
  const auto path_end = std::min(e.target.find('?'), e.target.size());
  for (std::size_t start = 0; start <= path_end;) {
    auto slash = e.target.find('/', start);
    if (slash == std::string::npos || slash > path_end) slash = path_end;
    const std::string_view segment(e.target.data() + start, slash - start);
    if (dot_segment(segment)) {
      for (const auto& f : in_path)
        if (f.begin < slash && f.end > start) {
          e.error = "source field '" + *f.name + "' makes the path segment '" + std::string(segment) +
                    "', which a proxy or server would resolve to another path";
          e.target.clear();
          return e;
        }
    }
    start = slash + 1;
  }
  return e;
}

}  // namespace dibs::http
