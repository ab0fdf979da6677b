// No secret a request carries reaches the store, on every store: a run with `--reuse-answers
// store`, a bearer token from {env:...} in a header, a key written into another header, a key in
// the URL's query and a token from {env:...} in the body, against Python's http.server
// (tests/servers/small_api.py); then the whole database, as its own dump tool writes it (every
// table and collection, dibs's and the user's), holds none of them, while it does hold the kept
// answers (so the search reads what dibs wrote).
#include "http_servers/small_api.hpp"
#include "support/backend.hpp"
#include "support/own_place.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace dibs;

BACKEND_TEST_CASE("no secret of a request is written in the store, with its answers kept there", "[reuse][stored-answers][secrets]") {
  test::small_api api("keepalive", {});
  auto s = test::db.fresh("secrets");
  REQUIRE(s.seed(20, 5) == 20);
  ::setenv("DIBS_TEST_BEARER", "tok-live-7f3a9c0e21", 1);
  ::setenv("DIBS_TEST_BODY_TOKEN", "body-secret-4d8e1b", 1);
  const std::vector<std::string> common{"--reuse-answers", "store", "--answer-ttl", "1h", "--no-progress",
                                        "--header", "Authorization: Bearer {env:DIBS_TEST_BEARER}",
                                        "--header", "X-Api-Key: literal-key-9b4d1a77"};
  // GET with a key in the query, then POST with a token in the body.
  auto get = common;
  get.insert(get.begin(), {"enrich", "--url", api.base_url() + "/json/{originatingIp}?lang=en&key=url-key-51c2e8"});
  auto [rc, out] = test::dibs_at(test::db, s.name, get);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(s.stats_blocking().done == 20);

  auto posted = test::db.fresh("secrets_post");
  REQUIRE(posted.seed(20, 6) == 20);
  auto post = common;
  post.insert(post.begin(), {"enrich", "--url", api.base_url() + "/json", "--body",
                             R"({"ip": {originatingIp}, "auth": "{env:DIBS_TEST_BODY_TOKEN}"})"});
  std::tie(rc, out) = test::dibs_at(test::db, posted.name, post);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(posted.stats_blocking().done == 20);

  const auto everything = test::everything_in_database();
  CHECK(everything.find("dibs_answers") != std::string::npos);  // dibs's own records are in what is read
  CHECK(everything.find("Nowhere") != std::string::npos);        // and so are the answers (their country)
  for (const char* secret : {"tok-live-7f3a9c0e21", "literal-key-9b4d1a77", "url-key-51c2e8", "body-secret-4d8e1b"}) {
    INFO(secret);
    CHECK(everything.find(secret) == std::string::npos);
  }
}
