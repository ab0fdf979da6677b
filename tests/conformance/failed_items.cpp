// `dibs failed` on every store, as users run it: each failed item a JSON line (key, source,
// reason, the API's status and words, attempts, when), selected by the filters `dibs retry` has,
// and the lines fed back through `dibs retry --from`, which puts exactly those items back. The
// API is Python's http.server (tests/servers/small_api.py), which has nothing for a share of keys.
#include "http_servers/small_api.hpp"
#include "support/backend.hpp"
#include "support/own_place.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace dibs;

namespace {
// The lines of `dibs failed`'s output in `text` (logs, if any, are not JSON objects).
std::vector<std::string> failed_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("{\"key\":", 0) == 0) out.push_back(line);
  return out;
}

std::string key_of(const std::string& line) {
  simdjson::dom::parser p;
  return std::string(std::string_view(p.parse(line)["key"]));
}

std::set<std::string> keys_of(const std::vector<std::string>& lines) {
  std::set<std::string> keys;
  for (const auto& l : lines) keys.insert(key_of(l));
  return keys;
}

std::size_t listed(const std::string& name, std::vector<std::string> filters) {
  filters.insert(filters.begin(), "failed");
  auto [rc, out] = test::dibs_at(test::db, name, filters);
  INFO(out);
  CHECK(rc == 0);
  return failed_lines(out).size();
}
}  // namespace

BACKEND_TEST_CASE("dibs failed lists each failed item as a JSON line, by dibs retry's filters, and dibs retry --from "
                  "puts exactly those lines' items back", "[failed][retry][cli]") {
  test::small_api api("keepalive", {"--not-found-share", "0.3"});
  auto s = test::db.fresh("failed_lines");
  REQUIRE(s.seed(40, 17) == 40);
  // No pre-flight: a third of the keys are "not found", and a pre-flight whose three items all
  // are (3% of starts, by which items the claim finds first) rightly refuses the run as a wrong
  // path; this test is of the failures the run leaves.
  const std::vector<std::string> enrich{"enrich", "--url", api.base_url() + "/json/{originatingIp}", "--no-progress",
                                        "--no-preflight"};
  auto [rc, out] = test::dibs_at(test::db, s.name, enrich);
  INFO(out);
  CHECK(rc == 1);
  const auto failed = s.stats_blocking().failed;
  REQUIRE(failed >= 4);  // the keys the API has nothing for (about a third, by their hash)

  const auto dir = test::scratch_dir("dibs-failed", s.name);
  const auto all = (dir / "failed.jsonl").string();
  std::tie(rc, out) = test::dibs_at(test::db, s.name, {"failed", "--out", all});
  INFO(out);
  REQUIRE(rc == 0);
  const auto lines = failed_lines(test::slurp(all));
  REQUIRE(lines.size() == failed);
  const std::regex ipv4(R"(\d{1,3}(\.\d{1,3}){3})");
  const std::regex utc(R"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)");
  simdjson::dom::parser parser;
  for (const auto& line : lines) {
    INFO(line);
    simdjson::dom::element d;
    REQUIRE_FALSE(parser.parse(line).get(d));
    CHECK_FALSE(std::string_view(d["key"]).empty());
    CHECK(std::regex_match(std::string(std::string_view(d["source"])), ipv4));
    CHECK(std::string_view(d["reason"]) == "HTTP 404 Not Found: no location known for this address");
    CHECK(int64_t(d["http_status"]) == 404);
    CHECK(std::string_view(d["answer"]) == "no location known for this address");
    CHECK(int64_t(d["attempts"]) == 1);
    CHECK(std::regex_match(std::string(std::string_view(d["failed_at"])), utc));
  }
  CHECK(keys_of(lines).size() == failed);

  // The filters `dibs retry` has, the same selection.
  CHECK(listed(s.name, {"--reason", "no location known"}) == failed);
  CHECK(listed(s.name, {"--reason", "nothing of the sort"}) == 0);
  CHECK(listed(s.name, {"--reason-is", "HTTP 404 Not Found: no location known for this address"}) == failed);
  CHECK(listed(s.name, {"--reason-is", "HTTP 404"}) == 0);
  CHECK(listed(s.name, {"--since", "1h"}) == failed);
  CHECK(listed(s.name, {"--since", "2000-01-01T00:00:00Z"}) == failed);

  // Half of the lines back through dibs retry --from: exactly those items, none of the others.
  const auto half = (dir / "half.jsonl").string();
  std::set<std::string> put_back;
  {
    std::ofstream f(half);
    for (std::size_t i = 0; i < lines.size() / 2; ++i) {
      f << lines[i] << "\n";
      put_back.insert(key_of(lines[i]));
    }
  }
  std::tie(rc, out) = test::dibs_at(test::db, s.name, {"retry", "--from", half});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("retry: " + std::to_string(put_back.size()) + " failed item"));
  auto st = s.stats_blocking();
  CHECK(st.failed == failed - put_back.size());
  CHECK(st.pending == put_back.size());
  std::tie(rc, out) = test::dibs_at(test::db, s.name, {"failed"});
  std::set<std::string> left = keys_of(failed_lines(out));
  for (const auto& k : put_back) CHECK(left.count(k) == 0);
  CHECK(left.size() == failed - put_back.size());

  // The next run does them again (and the API still has nothing for them).
  std::tie(rc, out) = test::dibs_at(test::db, s.name, enrich);
  CHECK(rc == 1);
  CHECK(s.stats_blocking().failed == failed);
  CHECK(keys_of(failed_lines(test::dibs_at(test::db, s.name, {"failed"}).second)) == keys_of(lines));
}
