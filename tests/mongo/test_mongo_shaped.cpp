// `dibs enrich` over MongoDB against an API of another shape (tests/servers/shaped_api.py): a POST
// body built from several fields of each document (a string, a number, a sub-document), and the
// answer's nested members mapped into typed fields of their own (--map).
#include "http_servers/shaped_api.hpp"
#include "support/mongo_collection.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dibs;

namespace {
bson_type_t type_at(const bson_t* doc, const char* path) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path, &child)) return bson_iter_type(&child);
  return BSON_TYPE_EOD;
}
double double_at(const bson_t* doc, const char* path) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path, &child) && BSON_ITER_HOLDS_NUMBER(&child))
    return bson_iter_as_double(&child);
  return -1;
}
}  // namespace

TEST_CASE("a body from a document's fields, and the answer's members mapped into typed fields", "[mongo][enrich][map]") {
  test::shaped_api api;
  test::mongo_collection c("shaped");
  auto& [o, s] = c;
  mongo::run_command(s, "{\"insert\": \"" + o.collection +
                            "\", \"documents\": [{\"_id\": 1, \"ip\": \"1.2.3.4\", \"name\": \"O\\\"Brien \\\\ Z\\u00fcrich\", "
                            "\"n\": 42, \"geo\": {\"a\": [1, 2]}, \"location\": null}, {\"_id\": 2, \"ip\": \"none-2\", "
                            "\"name\": \"x\", \"n\": 1, \"geo\": {}, \"location\": null}]}");
  std::vector<std::string> run = {test::dibs_binary(), "enrich"};
  for (const auto& w : c.where()) run.push_back(w);
  run.insert(run.end(), {"--url", api.base_url() + "/geo/{ip}", "--body", R"({"name": {name}, "n": {n}, "geo": {geo}})",
                         "--map", "country=/country,lat=/loc/lat,loc=/loc,tags=/tags,asn=/asn,echo=/received/name,nothing=/nope",
                         "--no-data-on", "404", "--no-progress"});
  std::string out;
  test::child_process p(run, true);
  const int rc = p.finish(out);
  INFO(out);
  REQUIRE(rc == 0);
  // The body arrived as the document holds its fields: the string escaped, the number, the sub-document.
  const auto got = api.requests();
  const auto first = std::find_if(got.begin(), got.end(), [](const auto& r) { return r.path == "/geo/1.2.3.4"; });
  REQUIRE(first != got.end());
  CHECK(first->body == "{\"name\": \"O\\\"Brien \\\\ Z\xC3\xBCrich\", \"n\": 42, \"geo\": {\"a\":[1,2]}}");

  const auto docs = mongo::documents(s);
  REQUIRE(docs.size() == 2);
  const bson_t* done = docs[0].get();
  const bson_t* none = docs[1].get();
  CHECK(test::utf8_at(done, "country") == "Freedonia");
  CHECK(type_at(done, "lat") == BSON_TYPE_DOUBLE);
  CHECK(double_at(done, "lat") == 48.5);
  CHECK(type_at(done, "loc") == BSON_TYPE_DOCUMENT);
  CHECK(double_at(done, "loc.lon") == -2.25);
  CHECK(type_at(done, "tags") == BSON_TYPE_ARRAY);
  CHECK((type_at(done, "asn") == BSON_TYPE_INT32 || type_at(done, "asn") == BSON_TYPE_INT64));
  CHECK(test::utf8_at(done, "echo") == "O\"Brien \\ Z\xC3\xBCrich");  // the API's echo of the body's string, intact
  CHECK(type_at(done, "nothing") == BSON_TYPE_NULL);
  CHECK(test::utf8_at(done, "location.country") == "Freedonia");  // the target: the mapped values, the done mark
  // No data: the API's own words in the target, nothing mapped.
  CHECK(test::utf8_at(none, "location.error") == "not found");
  CHECK(type_at(none, "country") == BSON_TYPE_EOD);
}

TEST_CASE("dibs init --map on MongoDB: recorded for enrich, a :TYPE and a mapped _id or lock field refused", "[mongo][init][map]") {
  test::shaped_api api;
  test::mongo_collection c("init_map");
  auto& [o, s] = c;
  mongo::run_command(s, "{\"insert\": \"" + o.collection +
                            "\", \"documents\": [{\"_id\": 1, \"ip\": \"1.2.3.4\", \"location\": null}]}");
  const auto dibs = [&](std::vector<std::string> args) {
    std::vector<std::string> run = {test::dibs_binary()};
    run.push_back(args.front());
    for (const auto& w : c.where()) run.push_back(w);
    run.insert(run.end(), args.begin() + 1, args.end());
    std::string out;
    test::child_process p(run, true);
    const int rc = p.finish(out);
    return std::pair<int, std::string>{rc, out};
  };
  for (const auto& [map, says] : std::vector<std::pair<std::string, std::string>>{
           {"country=/country:VARCHAR(64)", "a :TYPE is for a SQL table's column"},
           {"_id=/asn", "is the key"},
           {"_dibs=/asn", "dibs keeps its own data under"},
           {"ip=/query", "is the --source field"}}) {
    INFO(map);
    const auto [rc, out] = dibs({"init", "--source", "ip", "--map", map});
    INFO(out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains(says));
  }
  auto [rc, out] = dibs({"init", "--source", "ip", "--map", "country=/country,lat=/loc/lat"});
  INFO(out);
  REQUIRE(rc == 0);
  std::tie(rc, out) = dibs({"enrich", "--url", api.base_url() + "/geo/{ip}", "--no-progress"});
  INFO(out);
  CHECK(rc == 0);
  const auto docs = mongo::documents(s);
  REQUIRE(docs.size() == 1);
  CHECK(test::utf8_at(docs[0].get(), "country") == "Freedonia");
  CHECK(double_at(docs[0].get(), "lat") == 48.5);
}

TEST_CASE("a --budget kept in MongoDB: its calls and no more, and the next run the same day makes none", "[mongo][budget]") {
  test::shaped_api api;
  test::mongo_collection c("budget");
  std::vector<std::string> seed = {test::dibs_binary(), "seed"};
  for (const auto& w : c.where()) seed.push_back(w);
  seed.insert(seed.end(), {"--docs", "40"});
  std::string out;
  test::child_process seeding(seed, true);
  REQUIRE(seeding.finish(out) == 0);
  std::vector<std::string> run = {test::dibs_binary(), "enrich"};
  for (const auto& w : c.where()) run.push_back(w);
  run.insert(run.end(), {"--url", api.base_url() + "/geo/{originatingIp}", "--budget", "10/day", "--concurrency", "4",
                         "--no-progress"});
  for (int round = 0; round < 2; ++round) {
    out.clear();
    test::child_process p(run, true);
    const int rc = p.finish(out);
    INFO("round " << round << ": " << out);
    CHECK(rc == 4);
    CHECK_THAT(out, Catch::Contains("--budget 10/day spent"));
    CHECK(api.requests().size() == 10);  // the second run, the same day, made none
  }
  std::vector<std::string> status = {test::dibs_binary(), "status"};
  for (const auto& w : c.where()) status.push_back(w);
  out.clear();
  test::child_process st(status, true);
  REQUIRE(st.finish(out) == 0);
  INFO(out);
  CHECK_THAT(out, Catch::Contains(": 10 of 10 calls used, 0 left"));
}
