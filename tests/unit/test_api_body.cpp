// What an API's body is and says in its own words (no network): the pre-flight tells the API's
// answer from a web server's page by it, and a failure keeps the API's message.
#include "adapters/http/processor/api_body.hpp"

#include <catch2/catch.hpp>

using dibs::http::api_message;
using dibs::http::body_kind;
using dibs::http::describe_body;
using dibs::http::kind_of_body;
using dibs::http::with_api_message;

TEST_CASE("a body's kind: a JSON object or array, other JSON, an HTML page, text, nothing", "[http][api-body]") {
  CHECK(kind_of_body("{\"status\":\"success\"}") == body_kind::json_object);
  CHECK(kind_of_body("  [1, 2]\n") == body_kind::json_array);
  CHECK(kind_of_body("\"fail\"") == body_kind::json_other);
  CHECK(kind_of_body("<!DOCTYPE html><html><body>hi</body></html>") == body_kind::html);
  CHECK(kind_of_body("<html>\r\n<head><title>404 Not Found</title></head>") == body_kind::html);
  CHECK(kind_of_body("<b>x") == body_kind::html);  // not JSON, starts like markup
  CHECK(kind_of_body("no location known") == body_kind::text);
  CHECK(kind_of_body("{\"cut\": ") == body_kind::text);  // a JSON object cut short is not one
  CHECK(kind_of_body(" \n") == body_kind::empty);
  CHECK(describe_body("<html><head><title>Welcome to nginx!</title></head></html>") ==
        "an HTML page (<title>Welcome to nginx!</title>)");
  CHECK(describe_body("") == "an empty body");
}

TEST_CASE("the API's own message: its message member, a page's title, its text, the first 200 characters", "[http][api-body]") {
  CHECK(api_message("{\"error\":\"no location known for this address\"}") == "no location known for this address");
  CHECK(api_message("{\"status\":\"fail\",\"message\":\"invalid query\"}") == "invalid query");
  CHECK(api_message("{\"detail\":\"Not Found\"}") == "Not Found");                 // FastAPI
  CHECK(api_message("{\"error\":{\"code\":7,\"message\":\"quota exceeded\"}}") == "quota exceeded");
  CHECK(api_message("{\"code\": 7}") == "{\"code\":7}");                            // nothing named: the object itself
  CHECK(api_message("<html><head><title>502 Bad Gateway</title></head><body>...</body></html>") == "502 Bad Gateway");
  CHECK(api_message("<p>upstream   timed\nout</p>") == "upstream timed out");
  CHECK(api_message("  no location\n  known \n") == "no location known");
  CHECK(api_message("") == "");
  const std::string long_text(500, 'x');
  CHECK(api_message(long_text) == std::string(200, 'x') + "...");
  // Cut on a character, never inside one: 300 two-byte characters keep 200 whole ones.
  std::string accents;
  for (int i = 0; i < 300; ++i) accents += "\xc3\xa9";
  const auto cut = api_message(accents);
  CHECK(cut.size() == 400 + 3);
}

TEST_CASE("a failure reason is the status line and the API's message, when it says more", "[http][api-body]") {
  CHECK(with_api_message("HTTP 404 Not Found", "{\"error\":\"no location known for this address\"}") ==
        "HTTP 404 Not Found: no location known for this address");
  CHECK(with_api_message("HTTP 404 Not Found", "<html><head><title>404 Not Found</title></head></html>") == "HTTP 404 Not Found");
  CHECK(with_api_message("HTTP 404 Not Found", "{\"status\":\"fail\",\"message\":\"not found\"}") == "HTTP 404 Not Found");
  CHECK(with_api_message("HTTP 500 Internal Server Error", "") == "HTTP 500 Internal Server Error");
  CHECK(with_api_message("HTTP 422 Unprocessable Entity", "ip must be IPv4") == "HTTP 422 Unprocessable Entity: ip must be IPv4");
}

TEST_CASE("an answer that says the account can make no more calls is told from a pace", "[api-body]") {
  const std::string spent =
      R"({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}})";
  CHECK(dibs::http::account_spent_code(429, spent) == "insufficient_quota");
  CHECK(dibs::http::account_spent_code(403, R"({"error": {"code": "enforced_spend_limit_reached"}})") ==
        "enforced_spend_limit_reached");
  CHECK(dibs::http::account_spent_code(429, R"({"error": {"type": "billing_hard_limit_reached"}})") == "billing_hard_limit_reached");
  // A rate limit is the API's pace, not the account's end.
  CHECK(dibs::http::account_spent_code(429, R"({"error": {"type": "requests", "code": "rate_limit_exceeded"}})").empty());
  CHECK(dibs::http::account_spent_code(200, spent).empty());
  CHECK(dibs::http::account_spent_code(429, "Too Many Requests").empty());
  CHECK(dibs::http::account_spent_code(429, R"({"error": "insufficient_quota"})").empty());  // no object: no code said
}
