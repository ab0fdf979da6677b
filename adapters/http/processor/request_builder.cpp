#include "request_builder.hpp"

#include "engine/src/uri_redact.hpp"

namespace dibs::http {

built_request build_request(const url_template& url, const request_shape& shape, const job& j, bool shown) {
  built_request b;
  auto target = url.expand(j);
  if (!target.error.empty()) {
    b.error = std::move(target.error);
    return b;
  }
  b.req.method = shape.method;
  b.req.target = std::move(target.target);
  const auto limit = url.max_value_bytes();
  for (const auto& h : shape.headers) {
    auto v = h.value.expand(j, limit);
    if (!v.error.empty()) {
      b.error = "header " + h.name + ": " + v.error;
      return b;
    }
    b.req.headers += h.name;
    b.req.headers += ": ";
    b.req.headers += shown ? std::string("[redacted]") : v.text;
    b.req.headers += "\r\n";
  }
  if (!shape.body.empty()) {
    auto body = shown ? shape.body.shown(j, limit) : shape.body.expand(j, limit);
    if (!body.error.empty()) {
      b.error = std::move(body.error);
      return b;
    }
    b.req.body = std::move(body.text);
    if (!shape.has_header("Content-Type"))
      b.req.content_type = shape.body.kind() == field_template::format::form ? "application/x-www-form-urlencoded"
                                                                              : "application/json";
  }
  return b;
}

namespace {
// "/v1/x?q=a&key=s3cret" -> "/v1/x?q=a&key=***": a key written into the URL stays out of the store.
std::string without_query_secrets(const std::string& target) {
  const auto q = target.find('?');
  if (q == std::string::npos) return target;
  std::string out = target.substr(0, q + 1);
  std::size_t i = q + 1;
  while (i <= target.size()) {
    auto end = target.find('&', i);
    if (end == std::string::npos) end = target.size();
    const std::string_view param(target.data() + i, end - i);
    const auto eq = param.find('=');
    if (eq != std::string_view::npos && is_secret_uri_option(param.substr(0, eq))) {
      out.append(param.substr(0, eq + 1)).append("***");
    } else {
      out.append(param);
    }
    if (end < target.size()) out += '&';
    i = end + 1;
  }
  return out;
}
}  // namespace

std::string request_identity(const url_template& url, const request_shape& shape, const job& j) {
  auto target = url.expand(j);
  if (!target.error.empty()) return {};
  const auto limit = url.max_value_bytes();
  std::string id = method_name(shape.method);
  id.append(" ").append(url.scheme()).append("://").append(url.host()).append(":").append(std::to_string(url.port()));
  id += without_query_secrets(target.target);
  for (const auto& h : shape.headers) {
    if (h.value.fields().empty()) continue;  // a fixed value: the same for every item, and where keys live
    auto v = h.value.shown(j, limit);
    if (!v.error.empty()) return {};
    id.append("\n").append(h.name).append(": ").append(v.text);
  }
  if (!shape.body.empty()) {
    auto body = shape.body.shown(j, limit);
    if (!body.error.empty()) return {};
    id.append("\n\n").append(body.text);
  }
  return id;
}

std::string describe_request(const url_template& url, const request& r) {
  const auto host = url.host().find(':') != std::string::npos ? "[" + url.host() + "]" : url.host();
  const bool default_port = url.port() == (url.scheme() == "https" ? 443 : 80);
  std::string out = method_name(r.method);
  out += ' ';
  out += redact_api_url(url.scheme() + "://" + host + (default_port ? "" : ":" + std::to_string(url.port())) + r.target);
  out += '\n';
  out += r.headers;
  if (r.method != request::verb::get) {
    out += "Content-Type: " + (r.content_type.empty() ? std::string("application/json") : r.content_type) + "\n";
    out += "\n" + r.body + "\n";
  }
  // Header lines end in CRLF on the wire; here, in LF.
  std::string lf;
  for (char c : out)
    if (c != '\r') lf += c;
  return lf;
}

}  // namespace dibs::http
