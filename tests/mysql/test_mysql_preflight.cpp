// `dibs enrich`'s pre-flight over MariaDB, as users meet it: a closed API port, a mistyped
// {field}, --source against the template, a template with no field, a wrong path. Each is
// refused before anything is claimed: exit 2, one line, and the table as it was (nothing failed,
// nothing leased, no attempt spent).
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/stores/mysql_store.hpp>
#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
struct seeded_table {
  explicit seeded_table(const std::string& name) : table(test::unique_table(name)), uri(test::mysql_uri_for(table)) {
    sql::mysql_options o;
    o.uri = uri;
    store = std::make_unique<sql::mysql_store>(o);
    store->reset_table();
    REQUIRE(store->seed(20, 5) == 20);
  }
  // The table as seeded: every row pending, never claimed, never failed.
  bool untouched() const {
    return store->query_value("SELECT COUNT(*) FROM " + table +
                              " WHERE dibs_lock_token IS NULL AND dibs_attempts = 0 AND dibs_failed_at IS NULL AND location IS NULL") ==
           std::optional<std::string>("20");
  }
  std::string table;
  std::string uri;
  std::unique_ptr<sql::mysql_store> store;
};

struct ran {
  int rc;
  std::string out;
};
ran enrich(const seeded_table& t, std::vector<std::string> more) {
  std::vector<std::string> argv{dibs::test::dibs_binary(), "enrich", "--store", t.uri, "--no-progress"};
  argv.insert(argv.end(), more.begin(), more.end());
  test::child_process p(argv, true);
  ran r;
  r.rc = p.finish(r.out);
  return r;
}
}  // namespace

TEST_CASE("MariaDB: a closed API port is refused before the run, no row failed or leased", "[mysql][enrich][preflight]") {
  seeded_table t("pf_closed");
  const auto r = enrich(t, {"--url", "http://127.0.0.1:1/json/{originatingIp}"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("dibs: error: the API can't be used: --url http://127.0.0.1:1/json/") &&
                        Catch::Contains("connect: Connection refused") && Catch::Contains("--no-preflight"));
  CHECK(t.untouched());
}

TEST_CASE("MariaDB: a mistyped {field} names the field, the row and the columns it has", "[mysql][enrich][preflight]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  seeded_table t("pf_field");
  const auto r = enrich(t, {"--url", api.base_url() + "/json/{originatingIpp}"});
  INFO(r.out);
  CHECK(r.rc == 2);
  // A SQL table's columns are known when it is opened: the field is checked there, before any row is read.
  CHECK_THAT(r.out, Catch::Contains("--url reads the field 'originatingIpp', but table " + t.table + " has no such column") &&
                        Catch::Contains("did you mean 'originatingIp'?") &&
                        Catch::Contains("(its columns: id, originatingIp, location"));
  CHECK(api.requests() == 0);
  CHECK(t.untouched());
}

TEST_CASE("MariaDB: --source naming another field than --url is refused before the run", "[mysql][enrich][preflight]") {
  seeded_table t("pf_source");
  const auto r = enrich(t, {"--source", "nosuch", "--url", "http://127.0.0.1:1/json/{originatingIp}"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("--source 'nosuch' and --url's {originatingIp} name different fields"));
  CHECK(t.untouched());
}

TEST_CASE("MariaDB: a --url with no {field} is a usage error", "[mysql][enrich][preflight]") {
  seeded_table t("pf_nofield");
  const auto r = enrich(t, {"--url", "http://127.0.0.1:1/json/"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("--url 'http://127.0.0.1:1/json/' names no {field}"));
  CHECK(t.untouched());
}

TEST_CASE("MariaDB: a path the API does not have (404) is refused before the run", "[mysql][enrich][preflight]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  seeded_table t("pf_404");
  const auto r = enrich(t, {"--url", api.base_url() + "/jsn/{originatingIp}"});
  INFO(r.out);
  CHECK(r.rc == 2);
  // A "not found" may be about its own key: two more pending items are asked (none is done yet).
  CHECK_THAT(r.out, Catch::Contains("HTTP 404 Not Found for each of the 3 pending items asked") &&
                        Catch::Contains("almost certainly a wrong URL path"));
  CHECK(api.requests() == 3);  // three items, and no retry of any
  CHECK(t.untouched());
}

TEST_CASE("MariaDB: the pre-flight's answer is its item's (not bought twice) and spends no attempt, --no-preflight sends none",
          "[mysql][enrich][preflight]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  seeded_table t("pf_ok");
  SECTION("with the pre-flight") {
    const auto r = enrich(t, {"--url", api.base_url() + "/json/{originatingIp}"});
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(api.requests() == 20);  // was 21: the pre-flight's item was bought again by the run
  }
  SECTION("without") {
    const auto r = enrich(t, {"--url", api.base_url() + "/json/{originatingIp}", "--no-preflight"});
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(api.requests() == 20);
  }
  CHECK(t.store->query_value("SELECT COUNT(*) FROM " + t.table + " WHERE dibs_attempts = 1 AND location IS NOT NULL") ==
        std::optional<std::string>("20"));
}

TEST_CASE("MariaDB: nothing pending, nothing to check: a closed port is not refused", "[mysql][enrich][preflight]") {
  const auto table = test::unique_table("pf_empty");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);
  s.reset_table();
  std::vector<std::string> argv{dibs::test::dibs_binary(), "enrich", "--store", o.uri, "--no-progress", "--url",
                                "http://127.0.0.1:1/json/{originatingIp}"};
  test::child_process p(argv, true);
  std::string out;
  const int rc = p.finish(out);
  INFO(out);
  CHECK(rc == 0);
}
