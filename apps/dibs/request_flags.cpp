#include "request_flags.hpp"

#include "secret_file.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <stdexcept>
#include <strings.h>

namespace dibs::cli {

namespace {
bool token_char(unsigned char c) {
  return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

// {env:NAME} and {file:PATH} in a header or a body.
std::string read_secret(std::string_view kind, std::string_view name) {
  if (kind == "env") {
    auto v = secret_from_env(std::string(name).c_str());
    if (!v) throw std::invalid_argument("{env:" + std::string(name) + "}: the variable " + std::string(name) + " is not set");
    return *v;
  }
  return read_secret_file(std::string(name), "{file:" + std::string(name) + "}");
}
}  // namespace

std::pair<std::string, std::string> split_header(const std::string& given) {
  // Nothing of what was given is echoed: a header's text may be a key pasted in the wrong place.
  const auto colon = given.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("--header takes 'Name: value' (a name of letters, digits and -): this one has no ':'");
  std::string name = given.substr(0, colon);
  if (name.empty()) throw std::invalid_argument("--header takes 'Name: value': this one has no name before its ':'");
  const auto bad = std::find_if(name.begin(), name.end(), [](char c) { return !token_char(static_cast<unsigned char>(c)); });
  if (bad != name.end())
    throw std::invalid_argument("--header takes 'Name: value' (a name of letters, digits and -): character " +
                                std::to_string(bad - name.begin() + 1) + " of this one's name is " +
                                (*bad == ' ' ? std::string("a space") : "not one of them"));
  for (const char* own : {"Host", "Content-Length", "Transfer-Encoding", "Connection"})
    if (::strcasecmp(name.c_str(), own) == 0)
      throw std::invalid_argument("--header " + name + ": dibs writes this header itself");
  std::string value = given.substr(colon + 1);
  const auto first = value.find_first_not_of(" \t");
  value = first == std::string::npos ? std::string() : value.substr(first);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  return {std::move(name), std::move(value)};
}

void request_flags::add_to(CLI::App& cmd, const std::string& group) {
  cmd.add_option("--header", headers,
                 "a request header, 'Name: value' (repeatable); the value may read the item's {field}s, or take a secret "
                 "from {env:NAME} or {file:PATH} (a file only its owner can read) so that `ps` shows no key; header "
                 "values are never printed")
      ->type_name("'NAME: VALUE'")
      ->allow_extra_args(false)
      ->group(group);
  cmd.add_option("--method", method, "the request's method (default: GET, or POST with --body)")
      ->type_name("GET|POST|PUT|PATCH")
      ->check(CLI::IsMember({"GET", "POST", "PUT", "PATCH"}, CLI::ignore_case))
      ->group(group);
  cmd.add_option("--body", body,
                 "the request's body, built from the item's fields: JSON ('{\"q\": {address}, \"n\": {count}}': a string "
                 "field becomes a JSON string, a number stays a number, an object is copied) or a form "
                 "('q={address}&lang=en', percent-encoded); {env:NAME} and {file:PATH} as in --header")
      ->type_name("TEMPLATE")
      ->group(group);
  cmd.add_option("--body-type", body_type, "how --body is written: json, form, or auto (json when it starts with {, [ or \")")
      ->type_name("auto|json|form")
      ->check(CLI::IsMember({"auto", "json", "form"}))
      ->capture_default_str()
      ->group(group);
}

http::request_shape request_flags::shape() const {
  http::request_shape s;
  if (!method.empty()) s.method = *http::method_from(method);
  else if (!body.empty()) s.method = http::request::verb::post;
  if (s.method == http::request::verb::get && !body.empty())
    throw std::invalid_argument("--method GET sends no body: drop --body, or give --method POST");
  for (const auto& given : headers) {
    auto [name, value] = split_header(given);
    http::header_template h;
    h.name = name;
    h.value = http::field_template::parse(value, http::field_template::format::header, "--header " + name, read_secret);
    s.headers.push_back(std::move(h));
  }
  if (!body.empty()) {
    auto type = body_type;
    if (type == "auto") {
      const auto first = body.find_first_not_of(" \t\r\n");
      const char c = first == std::string::npos ? ' ' : body[first];
      type = c == '{' || c == '[' || c == '"' ? "json" : "form";
    }
    s.body = http::field_template::parse(body, type == "json" ? http::field_template::format::json : http::field_template::format::form,
                                         "--body", read_secret);
  }
  return s;
}

}  // namespace dibs::cli
