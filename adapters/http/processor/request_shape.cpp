#include <dibs/http/request_shape.hpp>

#include <algorithm>
#include <strings.h>

namespace dibs::http {

std::vector<std::string> request_shape::fields() const {
  std::vector<std::string> out;
  auto add = [&](const field_template& t) {
    for (const auto& f : t.fields())
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (const auto& h : headers) add(h.value);
  add(body);
  return out;
}

bool request_shape::has_header(const std::string& name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const header_template& h) { return ::strcasecmp(h.name.c_str(), name.c_str()) == 0; });
}

const char* method_name(request::verb v) {
  switch (v) {
    case request::verb::get: return "GET";
    case request::verb::post: return "POST";
    case request::verb::put: return "PUT";
    case request::verb::patch: return "PATCH";
  }
  return "GET";
}

std::optional<request::verb> method_from(std::string_view text) {
  for (auto v : {request::verb::get, request::verb::post, request::verb::put, request::verb::patch})
    if (text.size() == std::string_view(method_name(v)).size() && ::strncasecmp(text.data(), method_name(v), text.size()) == 0)
      return v;
  return std::nullopt;
}

}  // namespace dibs::http
