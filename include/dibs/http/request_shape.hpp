// What a request for one item looks like beyond its URL: the method, headers whose values may
// read the item's fields or hold secrets, and a body built from its fields (JSON or a form).
// The URL template says where it goes (url_template.hpp); the processor builds each request
// from both (request_builder.hpp).
#pragma once

#include <dibs/http/client.hpp>
#include <dibs/http/field_template.hpp>

#include <string>
#include <vector>

namespace dibs::http {

struct header_template {
  std::string name;      // as the user spelled it
  field_template value;  // format::header; its value is never printed
};

struct request_shape {
  request::verb method = request::verb::get;
  std::vector<header_template> headers;
  // Empty: no body (a GET, or a POST of nothing). Its Content-Type follows its format
  // (application/json, application/x-www-form-urlencoded) unless a header gives one.
  field_template body;

  // The fields the headers and the body read (beside the URL's), in order of first use.
  std::vector<std::string> fields() const;
  // Whether a header named `name` (case-insensitive) is given.
  bool has_header(const std::string& name) const;
};

// "GET", "POST", ...; and back (upper or lower case), nullopt for another.
const char* method_name(request::verb v);
std::optional<request::verb> method_from(std::string_view text);

}  // namespace dibs::http
