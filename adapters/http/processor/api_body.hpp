// What an API's answer body is, and what it says in its own words, read without a network
// (tests/unit/test_api_body.cpp). The pre-flight tells the API's answer from a web server's page
// by its kind (a JSON object where the run expects one, or an HTML page with a 200 or a 404); a
// failure keeps the first 200 characters of the API's own message ("HTTP 404 Not Found: no
// location known for this address"), never only the status line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dibs::http {

enum class body_kind { empty, json_object, json_array, json_other, html, text };
body_kind kind_of_body(std::string_view body);
// "an HTML page (<title>Welcome to nginx!</title>)", "text that is not JSON ('...')": the body
// in a few words, for a refusal.
std::string describe_body(std::string_view body);

// The API's own message in `body`, at most `max_chars` characters (cut on a character, with
// "..."): a JSON object's "message", "error", "detail", "reason", "msg", "description" or "title"
// (or the "message" of an "error" object), else the object itself as compact text; an HTML
// page's <title>, else its text; plain text as it is, spaces squeezed. "" when there is none.
std::string api_message(std::string_view body, std::size_t max_chars = 200);
// `status_line` ("HTTP 404 Not Found") with the API's message after a colon, when the body has one
// that says more than the status line does (a server's "404 Not Found" page says nothing more).
std::string with_api_message(const std::string& status_line, std::string_view body);

// An answer that says the account itself can make no more calls (no item's fault, and none goes
// better by waiting): OpenAI's and Azure's `insufficient_quota`, `billing_hard_limit_reached`,
// `enforced_spend_limit_reached`, as the code or type of its JSON "error" object, with a 402, 403
// or 429. Returns that code; "" otherwise.
std::string account_spent_code(int status, std::string_view body);

}  // namespace dibs::http
