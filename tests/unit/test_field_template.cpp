// A request's header values and bodies built from an item's fields: each value written as the
// text around it needs it (JSON escaped or copied, a form percent-encoded, a header refused when
// it would carry a control byte), secrets filled once and never shown.
#include <dibs/http/field_template.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

using dibs::job;
using dibs::job_field;
using dibs::http::field_template;
using format = field_template::format;

namespace {
job_field text(std::string name, std::string value) { return {std::move(name), job_field::state::string, std::move(value), {}, {}}; }
job_field json(std::string name, std::string type, std::string value) {
  return {std::move(name), job_field::state::not_string, {}, std::move(type), std::move(value)};
}
job item(std::vector<job_field> fields) {
  job j;
  j.fields = std::move(fields);
  return j;
}
std::string secrets_env(std::string_view kind, std::string_view name) {
  if (kind == "env" && name == "KEY") return "s3cr\"et";
  throw std::invalid_argument("no such secret");
}
}  // namespace

TEST_CASE("a JSON body: strings escaped byte for byte, numbers and objects copied, non-ASCII kept", "[field-template]") {
  const auto t = field_template::parse(R"({"name": {name}, "n": {n}, "geo": {geo}, "city": {city}, "ok": {ok}})", format::json, "body");
  CHECK(t.fields() == std::vector<std::string>{"name", "n", "geo", "city", "ok"});
  const auto e = t.expand(item({text("name", "He said \"hi\" \\ back\n"), json("n", "number", "-12.5e3"),
                                json("geo", "object", R"({"a":[1,2],"b":"x"})"), text("city", "Z\xC3\xBCrich\x01"),
                                json("ok", "boolean", "true")}));
  REQUIRE(e.error.empty());
  CHECK(e.text == "{\"name\": \"He said \\\"hi\\\" \\\\ back\\n\", \"n\": -12.5e3, \"geo\": {\"a\":[1,2],\"b\":\"x\"}, "
                  "\"city\": \"Z\xC3\xBCrich\\u0001\", \"ok\": true}");
}

TEST_CASE("a field inside a JSON string of the template is escaped into that string", "[field-template]") {
  const auto t = field_template::parse(R"({"q": "ip {ip} n={n}", "esc": "a\"{ip}"})", format::json, "body");
  const auto e = t.expand(item({text("ip", "1.2.3.4\"x"), json("n", "number", "7")}));
  REQUIRE(e.error.empty());
  CHECK(e.text == R"({"q": "ip 1.2.3.4\"x n=7", "esc": "a\"1.2.3.4\"x"})");
}

TEST_CASE("a missing field, or one the store gives in no form, fails the item with the reason", "[field-template]") {
  const auto t = field_template::parse(R"({"a": {a}})", format::json, "body");
  CHECK_THAT(t.expand(item({})).error, Catch::Contains("field 'a'") && Catch::Contains("missing"));
  CHECK_THAT(t.expand(item({json("a", "ObjectId", "")})).error, Catch::Contains("ObjectId"));
  CHECK(t.expand(item({text("a", std::string(100, 'x'))}), 10).error.find("100 bytes") != std::string::npos);
}

TEST_CASE("{name?}: a missing field is null where a value stands, nothing in a string, a header or a form", "[field-template]") {
  const auto body = field_template::parse(R"({"a": {a?}, "s": "x{a?}y", "b": {b?}})", format::json, "body");
  CHECK(body.fields() == std::vector<std::string>{"a", "b"});
  auto e = body.expand(item({json("b", "number", "2")}));
  REQUIRE(e.error.empty());
  CHECK(e.text == R"({"a": null, "s": "xy", "b": 2})");
  e = body.expand(item({text("a", "q\""), json("b", "number", "2")}));  // present: as {a} would write it
  CHECK(e.text == R"({"a": "q\"", "s": "xq\"y", "b": 2})");
  CHECK(field_template::parse("Bearer {tok?}", format::header, "header").expand(item({})).text == "Bearer ");
  CHECK(field_template::parse("q={q?}&n=1", format::form, "body").expand(item({})).text == "q=&n=1");
  // One the store gives in no form is still a failure: only a missing field is optional.
  CHECK_FALSE(body.expand(item({json("a", "ObjectId", "")})).error.empty());
}

TEST_CASE("a null field fails the item with no call as a missing one does, and {name?} sends it as null", "[field-template]") {
  // In a prompt it would read "null" (and the call be paid for a row with nothing to ask); in an
  // array of inputs, the API refuses the whole batch.
  const auto prompt = field_template::parse(R"({"content": "Label this: {t}"})", format::json, "body");
  CHECK_THAT(prompt.expand(item({json("t", "null", "null")})).error, Catch::Contains("field 't'") && Catch::Contains("is null"));
  const auto element = field_template::parse(R"({"input": [{t}]})", format::json, "body");
  CHECK_FALSE(element.expand(item({json("t", "null", "null")})).error.empty());
  const auto optional = field_template::parse(R"({"a": {t?}, "s": "x{t?}y"})", format::json, "body");
  const auto e = optional.expand(item({json("t", "null", "null")}));
  REQUIRE(e.error.empty());
  CHECK(e.text == R"({"a": null, "s": "xy"})");
  // A value that only spells null in a string is a string.
  CHECK(prompt.expand(item({text("t", "null")})).error.empty());
}

TEST_CASE("a JSON template that is no JSON once filled is refused when parsed", "[field-template]") {
  CHECK_THROWS_WITH(field_template::parse(R"({"a": {a} "b": 1})", format::json, "--body"), Catch::Contains("not JSON"));
  // A field glued to a number is JSON only when the field is a number: sent invalid for a string.
  for (const char* glued : {R"({"a": -{ip}})", R"({"a": 1{n}})", R"({"a": {n}.5e{n}})", R"({"a": [{n}{n}]})"})
    CHECK_THROWS_WITH(field_template::parse(glued, format::json, "--body"), Catch::Contains("not JSON"));
  CHECK_NOTHROW(field_template::parse(R"({"a": [{n}, {ip}], "b": "{n}.5"})", format::json, "--body"));
  CHECK_NOTHROW(field_template::parse(R"([{a}, {}, {"x": []}])", format::json, "--body"));
}

TEST_CASE("a header value with a CR or LF from a field fails the item, and in the template it is refused", "[field-template]") {
  const auto t = field_template::parse("Bearer {token}", format::header, "--header Authorization");
  CHECK(t.expand(item({text("token", "abc\tdef")})).text == "Bearer abc\tdef");
  CHECK_THAT(t.expand(item({text("token", "abc\r\nX-Evil: 1")})).error, Catch::Contains("control byte"));
  CHECK_THROWS(field_template::parse("a\nb", format::header, "--header X"));
}

TEST_CASE("a form body percent-encodes each value, and an object cannot stand in it", "[field-template]") {
  const auto t = field_template::parse("q={q}&n={n}&lang=en", format::form, "--body");
  CHECK(t.expand(item({text("q", "a b&c=d/\xC3\xA9"), json("n", "number", "3")})).text == "q=a%20b%26c%3Dd%2F%C3%A9&n=3&lang=en");
  CHECK_THAT(t.expand(item({text("q", "x"), json("n", "object", "{}")})).error, Catch::Contains("object"));
}

TEST_CASE("secrets are filled once, written as the text needs them, and shown only by name", "[field-template][secrets]") {
  const auto t = field_template::parse(R"({"key": {env:KEY}, "in": "k={env:KEY}"})", format::json, "--body", secrets_env);
  CHECK(t.has_secret());
  CHECK(t.expand(item({})).text == R"({"key": "s3cr\"et", "in": "k=s3cr\"et"})");
  CHECK(t.shown(item({})).text == R"({"key": {env:KEY}, "in": "k={env:KEY}"})");
  CHECK(t.text().find("s3cr") == std::string::npos);
  CHECK_THROWS_WITH(field_template::parse("{env:NOPE}", format::header, "--header X", secrets_env), Catch::Contains("no such secret"));
  // Without a source of secrets, a secret placeholder is refused rather than sent as text.
  CHECK_THROWS(field_template::parse("{env:KEY}", format::header, "--header X"));
}

TEST_CASE("braces that open no placeholder are text", "[field-template]") {
  const auto t = field_template::parse(R"({"a": {}, "b": "{not a field}", "c": {.x}})", format::form, "--body");
  CHECK(t.fields().empty());
  CHECK(t.expand(item({})).text == R"({"a": {}, "b": "{not a field}", "c": {.x}})");
}
