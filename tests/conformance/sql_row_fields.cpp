// A SQL row is as whole as a document: a request built from several columns of a user's table, on
// MariaDB and PostgreSQL, against a real API that records every request byte for byte
// (tests/servers/shaped_api.py). Each column keeps its type in a JSON body: a string escaped
// (quotes, non-ASCII), a number a number, a JSON column its object, a date ISO 8601; a NULL
// column fails its row with the reason (sent as null with {column?}); a header reads a column too; a misspelled column is
// refused before any claim, with the one meant.
#include "http_servers/shaped_api.hpp"
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dibs;

namespace {
using test::db;

std::pair<int, std::string> enrich(const std::string& uri, std::vector<std::string> more) {
  more.insert(more.begin(), {"enrich", "--store", uri, "--no-progress"});
  return test::run_dibs(more);
}
}  // namespace

BACKEND_TEST_CASE("a body and a header built from several columns of a row, each of its type, byte for byte at the API",
                  "[sql-fields][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("row_fields");
  const auto& table = s.name;
  const auto& source = db.sql_of().source_column;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "0"});
  REQUIRE(seed.finish(out) == 0);
  const bool pg = std::string(DIBS_BACKEND_NAME) == "PostgreSQL";
  s.execute("ALTER TABLE " + table + " ADD COLUMN title VARCHAR(80), ADD COLUMN pages INTEGER, ADD COLUMN meta " +
            (pg ? "jsonb" : "JSON") + ", ADD COLUMN lang VARCHAR(8), ADD COLUMN seen " + (pg ? "TIMESTAMP" : "DATETIME"));
  s.execute("INSERT INTO " + table + " (" + source + ", title, pages, meta, lang, seen) VALUES "
            "('k1', 'Caf\xC3\xA9 \"Zur\" Linde', 42, '{\"tags\": [\"a\", \"b\"], \"n\": 1}', 'de', '2024-01-02 03:04:05'), "
            "('k2', 'No pages', NULL, '{}', 'en', '2024-01-02 03:04:05')");
  const auto [rc, text] = enrich(s.uri(), {"--url", api.base_url() + "/geo/{originatingIp}", "--method", "POST", "--body",
                                           R"({"title": {title}, "pages": {pages}, "meta": {meta}, "seen": {seen}})",
                                           "--header", "Accept-Language: {lang}", "--no-preflight"});
  INFO(text);
  CHECK(rc == 1);  // k2's pages is NULL: that row fails with why, k1 is done
  const auto requests = api.requests();
  REQUIRE(requests.size() == 1);
  const auto& r = requests.front();
  CHECK(r.path == "/geo/k1");
  CHECK(r.header("Accept-Language") == "de");
  // The JSON column's object as the server writes it (jsonb normalizes spacing and member order).
  const std::string meta = pg ? R"({"n": 1, "tags": ["a", "b"]})" : R"({"tags": ["a", "b"], "n": 1})";
  CHECK(r.body == "{\"title\": \"Caf\xC3\xA9 \\\"Zur\\\" Linde\", \"pages\": 42, \"meta\": " + meta +
                      ", \"seen\": \"2024-01-02T03:04:05\"}");
  CHECK(s.query_value("SELECT dibs_error FROM " + table + " WHERE " + source + " = 'k2'").value_or("").find("'pages'") !=
        std::string::npos);
}

BACKEND_TEST_CASE("{column?} sends a NULL column as null: the row is asked, not failed", "[sql-fields][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("row_fields_null");
  const auto& source = db.sql_of().source_column;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "0"});
  REQUIRE(seed.finish(out) == 0);
  s.execute("ALTER TABLE " + s.name + " ADD COLUMN title VARCHAR(80), ADD COLUMN pages INTEGER");
  s.execute("INSERT INTO " + s.name + " (" + source + ", title, pages) VALUES ('k1', 'A', NULL), ('k2', 'B', 7)");
  const auto [rc, text] = enrich(s.uri(), {"--url", api.base_url() + "/geo/{originatingIp}", "--method", "POST", "--body",
                                           R"({"title": {title}, "pages": {pages?}})", "--no-preflight"});
  INFO(text);
  CHECK(rc == 0);
  auto requests = api.requests();
  REQUIRE(requests.size() == 2);
  std::sort(requests.begin(), requests.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  CHECK(requests[0].body == R"({"title": "A", "pages": null})");
  CHECK(requests[1].body == R"({"title": "B", "pages": 7})");
  CHECK(s.stats_blocking().done == 2);
}

BACKEND_TEST_CASE("a body whose first column is not the source dibs init recorded still reads every column it names",
                  "[sql-fields][e2e]") {
  // Seen: a prompt "{title}\n{description}" on a table whose recorded source is description:
  // title, taken for the source until the record said otherwise, was read by no claim, and every
  // row failed "field 'title' (in the JSON body) is missing".
  test::shaped_api api;
  auto s = db.fresh("row_fields_recorded_source");
  const auto& source = db.sql_of().source_column;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "0"});
  REQUIRE(seed.finish(out) == 0);
  s.execute("ALTER TABLE " + s.name + " ADD COLUMN title VARCHAR(80)");
  s.execute("INSERT INTO " + s.name + " (" + source + ", title) VALUES ('k1', 'A'), ('k2', 'B')");
  test::child_process init({test::dibs_binary(), "init", "--store", s.uri(), "--source", "originatingIp", "--target", "location"});
  REQUIRE(init.finish(out) == 0);
  const auto [rc, text] = enrich(s.uri(), {"--url", api.base_url() + "/geo/any", "--method", "POST", "--body",
                                           R"({"title": {title}, "key": {originatingIp}})"});
  INFO(text);
  CHECK(rc == 0);
  auto requests = api.requests();
  REQUIRE(requests.size() == 2);
  std::sort(requests.begin(), requests.end(), [](const auto& a, const auto& b) { return a.body < b.body; });
  CHECK(requests[0].body == R"({"title": "A", "key": "k1"})");
  CHECK(requests[1].body == R"({"title": "B", "key": "k2"})");
}

BACKEND_TEST_CASE("a misspelled column in --body is refused before any claim, with the column meant", "[sql-fields][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("row_fields_typo");
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "3"});
  REQUIRE(seed.finish(out) == 0);
  s.execute("ALTER TABLE " + s.name + " ADD COLUMN title VARCHAR(80)");
  const auto [rc, text] = enrich(s.uri(), {"--url", api.base_url() + "/geo/{originatingIp}", "--method", "POST", "--body",
                                           R"({"title": {titel}})"});
  INFO(text);
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("titel") && Catch::Contains("title"));
  CHECK(api.requests().empty());
  CHECK(s.stats_blocking().pending == 3);
}

BACKEND_TEST_CASE("a JSON column as the whole body is sent as its object, and the dry run shows the request as the run sends it",
                  "[sql-fields][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("row_fields_json");
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "0"});
  REQUIRE(seed.finish(out) == 0);
  const bool pg = std::string(DIBS_BACKEND_NAME) == "PostgreSQL";
  const auto& source = db.sql_of().source_column;
  s.execute("ALTER TABLE " + s.name + " ADD COLUMN req " + (pg ? "jsonb" : "JSON") + ", ADD COLUMN n INTEGER");
  s.execute("INSERT INTO " + s.name + " (" + source + ", req, n) VALUES ('k1', '{\"q\": \"a b\"}', 7)");
  const std::vector<std::string> call{"--url", api.base_url() + "/geo/{originatingIp}", "--method", "POST", "--body",
                                      R"({"input": {req}, "n": {n}})"};
  auto dry = call;
  dry.insert(dry.end(), {"--dry-run", "1"});
  auto [rc, text] = enrich(s.uri(), dry);
  INFO(text);
  CHECK(rc == 0);
  CHECK_THAT(text, Catch::Contains(R"({"input": {"q": "a b"}, "n": 7})"));
  std::tie(rc, text) = enrich(s.uri(), call);
  CHECK(rc == 0);
  const auto requests = api.requests();
  REQUIRE_FALSE(requests.empty());
  // Before: the JSON column went as a string of its text ("{\"q\": ...}"), and the API said 400.
  CHECK(requests.back().body == R"({"input": {"q": "a b"}, "n": 7})");
  CHECK(s.stats_blocking().done == 1);
}
