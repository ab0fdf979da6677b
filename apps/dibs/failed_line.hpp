// `dibs failed`'s output: one JSON line per failed item, and the keys `dibs retry --from` reads
// back from such lines. Pure (tests/unit/test_failed_line.cpp).
//
//   {"key":"42","source":"8.8.8.8","reason":"HTTP 404 Not Found: no such address","http_status":404,
//    "answer":"no such address","attempts":1,"failed_at":"2026-11-28T14:30:00.123456Z"}
//
// "answer" is the first part of the API's answer as the failure kept it (a reason ends with the
// API's own words, at most 200 characters: api_body.hpp), null when the reason holds none;
// "failed_at" is null where the store keeps no time (JSON Lines); "source" null when missing.
#pragma once

#include <dibs/admin_store.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace dibs::cli {

std::string failed_line(const failed_item& f);
// The API's words in a failure's reason: what follows "HTTP <status> <text>: ", or nullopt.
std::optional<std::string> api_words_in(std::string_view reason);
// RFC 3339 in UTC with microseconds: "2026-11-28T14:30:00.123456Z".
std::string rfc3339_utc(store_time t);
// The "key" of one of those lines; nullopt when the line is no JSON object with a string "key".
std::optional<std::string> key_of_failed_line(std::string_view line);

}  // namespace dibs::cli
