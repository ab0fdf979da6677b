// The user's own PostgreSQL table, as users meet it: dibs enrich and dibs status create nothing
// (a missing table is refused by name, with the name probably meant); a table without dibs's
// columns is refused with the statements that add them; dibs init adds them, and dibs enrich then
// works.
#include "postgres/pg_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <adapters/postgres/pg_store.hpp>

#include "engine/src/uri_redact.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::run_dibs;
pg::pg_options options_for(const std::string& table) {
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  return o;
}
std::optional<std::string> table_count(pg::pg_store& s, const std::string& table) {
  return s.query_value("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND "
                       "table_name = '" + table + "'");
}
std::optional<std::string> column_count(pg::pg_store& s, const std::string& table) {
  return s.query_value("SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND "
                       "table_name = '" + table + "'");
}
void create_people(pg::pg_store& s, const std::string& table) {
  s.execute("CREATE TABLE " + table + " (id BIGSERIAL PRIMARY KEY, ip VARCHAR(64), name TEXT)");
  s.execute("INSERT INTO " + table + " (ip, name) SELECT '8.8.' || i || '.1', 'n' || i FROM generate_series(0, 39) AS i");
}
}  // namespace

TEST_CASE("dibs enrich and dibs status refuse a missing PostgreSQL table by name, with the one meant, and create nothing",
          "[postgres][own-table]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto table = test::unique_pg_table("ownzq");
  pg::pg_store s(options_for(table));  // creates `table`: the one the user meant
  const auto typo = "onwzq" + table.substr(5);
  std::string out;
  for (const auto& cmd : {std::string("enrich"), std::string("status")}) {
    std::vector<std::string> args{cmd, "--store", test::postgres_uri_for(typo)};
    if (cmd == "enrich") args.insert(args.end(), {"--url", api.base_url() + "/json/{originatingIp}", "--no-progress"});
    const int rc = run_dibs(args, out);
    INFO(cmd << ": " << out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains("dibs: error: no table '" + typo + "' in database "));
    CHECK_THAT(out, Catch::Contains("did you mean '" + table + "'?"));
    CHECK_THAT(out, Catch::Contains("create it with: dibs init --store '"));
    CHECK(table_count(s, typo) == std::optional<std::string>("0"));
  }
  CHECK(api.requests() == 0);
  REQUIRE(run_dibs({"seed", "--store", test::postgres_uri_for(typo), "--docs", "3"}, out) == 0);
  CHECK(table_count(s, typo) == std::optional<std::string>("1"));
  s.execute("DROP TABLE " + typo);
}

TEST_CASE("a PostgreSQL table without dibs's columns is refused with the statements that, like dibs init, make it work",
          "[postgres][own-table]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  pg::pg_store s(options_for(test::unique_pg_table("ownbase")));
  const auto by_alter = test::unique_pg_table("people_alter");
  const auto by_init = test::unique_pg_table("people_init");
  create_people(s, by_alter);
  create_people(s, by_init);
  const std::vector<std::string> fields{"--source", "ip", "--target", "geo"};
  auto enrich = [&](const std::string& table, std::string& out) {
    std::vector<std::string> args{"enrich", "--store", test::postgres_uri_for(table), "--url", api.base_url() + "/json/{ip}",
                                  "--no-progress"};
    args.insert(args.end(), fields.begin(), fields.end());
    return run_dibs(args, out);
  };

  std::string out;
  REQUIRE(enrich(by_alter, out) == 2);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("table " + by_alter + " lacks what dibs keeps its claims in (geo, lock_by, lock_token, "
                                  "lock_until, attempts, error, http_status, failed_at, index " + by_alter + "_dibs_open)"));
  CHECK_THAT(out, Catch::Contains("or run: dibs init --store '" + redact_uri(test::postgres_uri_for(by_alter)) +
                                  "' --source ip --target geo"));
  CHECK(column_count(s, by_alter) == std::optional<std::string>("3"));  // untouched
  CHECK(api.requests() == 0);
  const auto from = out.find("add it with: ");
  const auto to = out.find(" or run: ");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const auto statements = out.substr(from + 13, to - from - 13);
  CHECK_THAT(statements, Catch::StartsWith("ALTER TABLE \"" + by_alter + "\" ADD COLUMN \"geo\" JSONB NULL"));
  s.execute(statements);
  REQUIRE(enrich(by_alter, out) == 0);
  CHECK(s.query_value("SELECT count(*) FROM " + by_alter + " WHERE geo->>'query' = ip") == std::optional<std::string>("40"));

  std::vector<std::string> init{"init", "--store", test::postgres_uri_for(by_init)};
  init.insert(init.end(), fields.begin(), fields.end());
  REQUIRE(run_dibs(init, out) == 0);
  CHECK_THAT(out, Catch::Contains("init: "));
  REQUIRE(run_dibs(init, out) == 0);
  CHECK(column_count(s, by_init) == std::optional<std::string>("11"));  // 3 of the user's, 8 of dibs's
  REQUIRE(enrich(by_init, out) == 0);
  CHECK(s.query_value("SELECT count(*) FROM " + by_init + " WHERE geo->>'query' = ip AND name LIKE 'n%'") ==
        std::optional<std::string>("40"));
  REQUIRE(run_dibs({"status", "--store", test::postgres_uri_for(by_init), "--source", "ip", "--target", "geo"}, out) == 0);
  CHECK_THAT(out, Catch::Contains("done=40 failed=0"));
  s.execute("DROP TABLE " + by_alter);
  s.execute("DROP TABLE " + by_init);
}

TEST_CASE("a PostgreSQL table without the --source column is refused naming it", "[postgres][own-table]") {
  pg::pg_store s(options_for(test::unique_pg_table("ownbase")));
  const auto table = test::unique_pg_table("people_src");
  create_people(s, table);
  std::string out;
  CHECK(run_dibs({"init", "--store", test::postgres_uri_for(table), "--source", "address"}, out) == 2);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("--source reads the field 'address', but table " + table + " has no such column (its columns: id, ip, name)"));
  CHECK(column_count(s, table) == std::optional<std::string>("3"));
  s.execute("DROP TABLE " + table);
}
