// The flags that shape each request beyond its URL: `--header 'Name: value'` (repeatable; a
// value may read the item's {field}s, or hold a secret from {env:NAME} or {file:PATH}, a file
// only its owner can read), `--method`, and `--body` (JSON or a form, built from the item's
// fields). Header values are secrets: no message, log or help text shows one.
#pragma once

#include <dibs/http/request_shape.hpp>

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dibs::cli {

struct request_flags {
  std::vector<std::string> headers;  // "Name: value", as given
  std::string method;                // "" = GET, or POST with a --body
  std::string body;
  std::string body_type = "auto";    // json, form, or auto (json when it starts with '{', '[' or '"')

  void add_to(CLI::App& cmd, const std::string& group);
  // Parsed, secrets read; throws std::invalid_argument naming the flag (never a header's value).
  http::request_shape shape() const;
};

// "Name: value" split and checked: a header name is an RFC 9110 token, and not one the client
// writes itself (Host, Content-Length, Transfer-Encoding, Connection). Throws naming the flag.
std::pair<std::string, std::string> split_header(const std::string& given);

}  // namespace dibs::cli
