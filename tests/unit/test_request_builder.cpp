// One item's request from the URL template and the request's shape: method, header lines, body
// and its Content-Type; and the same as a message may print it, with no secret in it.
#include "adapters/http/processor/request_builder.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;
using dibs::job;
using dibs::job_field;

namespace {
job item() {
  job j;
  j.fields.push_back({"ip", job_field::state::string, "1.2.3.4", {}, {}});
  j.fields.push_back({"lang", job_field::state::string, "de", {}, {}});
  return j;
}
request_shape shaped(const std::string& body, field_template::format f) {
  request_shape s;
  s.method = request::verb::post;
  s.headers.push_back({"X-Api-Key", field_template::parse("{env:K}", field_template::format::header, "--header X-Api-Key",
                                                          [](std::string_view, std::string_view) { return std::string("k3y"); })});
  s.headers.push_back({"Accept-Language", field_template::parse("{lang}", field_template::format::header, "--header")});
  s.body = field_template::parse(body, f, "--body");
  return s;
}
}  // namespace

TEST_CASE("a POST with headers and a JSON body, its Content-Type by the body's format", "[request-builder]") {
  const auto url = url_template::parse("http://api.example:8080/geo?key=abc");
  const auto b = build_request(url, shaped(R"({"ip": {ip}})", field_template::format::json), item());
  REQUIRE(b.error.empty());
  CHECK(b.req.method == request::verb::post);
  CHECK(b.req.target == "/geo?key=abc");
  CHECK(b.req.headers == "X-Api-Key: k3y\r\nAccept-Language: de\r\n");
  CHECK(b.req.body == R"({"ip": "1.2.3.4"})");
  CHECK(b.req.content_type == "application/json");
  const auto form = build_request(url, shaped("ip={ip}", field_template::format::form), item());
  CHECK(form.req.content_type == "application/x-www-form-urlencoded");
}

TEST_CASE("the request as a message prints it: header values and the URL's key redacted", "[request-builder][secrets]") {
  const auto url = url_template::parse("http://api.example:8080/geo?key=abc123secret");
  const auto b = build_request(url, shaped(R"({"ip": {ip}})", field_template::format::json), item(), true);
  const auto text = describe_request(url, b.req);
  CHECK_THAT(text, Catch::StartsWith("POST http://api.example:8080/geo?key="));
  CHECK_THAT(text, Catch::Contains("X-Api-Key: [redacted]\nAccept-Language: [redacted]\n"));
  CHECK_THAT(text, Catch::Contains(R"({"ip": "1.2.3.4"})"));
  CHECK(text.find("k3y") == std::string::npos);
  CHECK(text.find("abc123secret") == std::string::npos);
}

TEST_CASE("a header that can't be written fails the item, naming the header", "[request-builder]") {
  request_shape s;
  s.headers.push_back({"X-Who", field_template::parse("{who}", field_template::format::header, "--header X-Who")});
  const auto b = build_request(url_template::parse("http://h/x/{ip}"), s, item());
  CHECK_THAT(b.error, Catch::Contains("header X-Who") && Catch::Contains("'who'"));
}

TEST_CASE("methods by name, either case", "[request-builder]") {
  CHECK(method_from("patch") == request::verb::patch);
  CHECK(std::string(method_name(request::verb::put)) == "PUT");
  CHECK_FALSE(method_from("DELETE"));
}

TEST_CASE("the request's identity (what answer reuse and the store key it by) holds no secret, and tells items apart",
          "[request-builder][secrets]") {
  const auto url = url_template::parse("http://api.example:8080/geo?lang=en&api_key=abc123secret&q={ip}");
  request_shape s = shaped(R"({"ip": {ip}})", field_template::format::json);
  s.body = field_template::parse(R"({"ip": {ip}, "auth": "{env:K}"})", field_template::format::json, "--body",
                                 [](std::string_view, std::string_view) { return std::string("k3y"); });
  s.headers.push_back({"Authorization", field_template::parse("Bearer tok-literal-77", field_template::format::header,
                                                              "--header Authorization")});
  const auto id = request_identity(url, s, item());
  CHECK(id == "POST http://api.example:8080/geo?lang=en&api_key=***&q=1.2.3.4\nAccept-Language: de\n\n"
              R"({"ip": "1.2.3.4", "auth": "{env:K}"})");
  for (const char* secret : {"k3y", "abc123secret", "tok-literal-77"}) CHECK(id.find(secret) == std::string::npos);
  // What an item's fields bring makes its answer: another language, another identity.
  auto other = item();
  other.fields[1].value = "fr";
  CHECK(request_identity(url, s, other) != id);
}
