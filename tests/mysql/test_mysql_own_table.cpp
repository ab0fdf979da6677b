// The user's own MariaDB table, as users meet it: dibs enrich and dibs status create nothing (a
// missing table is refused by name, with the name probably meant); a table without dibs's columns
// is refused with the ALTER TABLE that adds them; dibs init adds them, and dibs enrich then works.
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <dibs/stores/mysql_store.hpp>

#include "engine/src/uri_redact.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::run_dibs;
std::optional<std::string> table_count(sql::mysql_store& s, const std::string& table) {
  return s.query_value("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" +
                       table + "'");
}
std::optional<std::string> column_count(sql::mysql_store& s, const std::string& table) {
  return s.query_value("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" +
                       table + "'");
}
// The user's table: their own id, source and another column, 40 rows of public addresses.
void create_people(sql::mysql_store& s, const std::string& table) {
  s.execute("CREATE TABLE " + table + " (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, ip VARCHAR(64), name VARCHAR(32))");
  std::string values;
  for (int i = 0; i < 40; ++i) values += std::string(i ? "," : "") + "('8.8." + std::to_string(i) + ".1', 'n" + std::to_string(i) + "')";
  s.execute("INSERT INTO " + table + " (ip, name) VALUES " + values);
}
}  // namespace

TEST_CASE("dibs enrich and dibs status refuse a missing MariaDB table by name, with the one meant, and create nothing",
          "[mysql][own-table]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto table = test::unique_table("ownzq");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  sql::mysql_store s(o);  // creates `table`: the one the user meant
  const auto typo = "onwzq" + table.substr(5);
  std::string out;
  for (const auto& cmd : {std::string("enrich"), std::string("status")}) {
    std::vector<std::string> args{cmd, "--store", test::mysql_uri_for(typo)};
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
  // dibs seed may create it.
  REQUIRE(run_dibs({"seed", "--store", test::mysql_uri_for(typo), "--docs", "3"}, out) == 0);
  CHECK(table_count(s, typo) == std::optional<std::string>("1"));
  s.execute("DROP TABLE " + typo);
}

TEST_CASE("a MariaDB table without dibs's columns is refused with the ALTER TABLE that, like dibs init, makes it work",
          "[mysql][own-table]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("ownbase"));
  sql::mysql_store s(o);
  const auto by_alter = test::unique_table("people_alter");
  const auto by_init = test::unique_table("people_init");
  create_people(s, by_alter);
  create_people(s, by_init);
  const std::vector<std::string> fields{"--source", "ip", "--target", "geo"};
  auto enrich = [&](const std::string& table, std::string& out) {
    std::vector<std::string> args{"enrich", "--store", test::mysql_uri_for(table), "--url", api.base_url() + "/json/{ip}",
                                  "--no-progress"};
    args.insert(args.end(), fields.begin(), fields.end());
    return run_dibs(args, out);
  };

  std::string out;
  REQUIRE(enrich(by_alter, out) == 2);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("table " + by_alter + " lacks what dibs keeps its claims in (geo, lock_by, lock_token, "
                                  "lock_until, attempts, error, http_status, failed_at, dibs_pick, dibs_open, index dibs_claim)"));
  CHECK_THAT(out, Catch::Contains("or run: dibs init --store '" + redact_uri(test::mysql_uri_for(by_alter)) +
                                  "' --source ip --target geo"));
  CHECK(column_count(s, by_alter) == std::optional<std::string>("3"));  // untouched
  CHECK(api.requests() == 0);
  // The statement it printed is the one to run.
  const auto from = out.find("add it with: ");
  const auto to = out.find("; or run: ");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const auto alter = out.substr(from + 13, to - from - 13);
  CHECK_THAT(alter, Catch::StartsWith("ALTER TABLE `" + by_alter + "` ADD COLUMN `geo` JSON NULL"));
  s.execute(alter);
  REQUIRE(enrich(by_alter, out) == 0);
  CHECK(s.query_value("SELECT COUNT(*) FROM " + by_alter + " WHERE JSON_UNQUOTE(JSON_EXTRACT(geo, '$.query')) = ip") ==
        std::optional<std::string>("40"));

  // dibs init adds them (twice: the second changes nothing); the user's rows and columns stay.
  std::vector<std::string> init{"init", "--store", test::mysql_uri_for(by_init)};
  init.insert(init.end(), fields.begin(), fields.end());
  REQUIRE(run_dibs(init, out) == 0);
  CHECK_THAT(out, Catch::Contains("init: "));
  REQUIRE(run_dibs(init, out) == 0);
  CHECK(column_count(s, by_init) == std::optional<std::string>("13"));  // 3 of the user's, 10 of dibs's
  REQUIRE(enrich(by_init, out) == 0);
  CHECK(s.query_value("SELECT COUNT(*) FROM " + by_init + " WHERE JSON_UNQUOTE(JSON_EXTRACT(geo, '$.query')) = ip AND name "
                      "LIKE 'n%'") == std::optional<std::string>("40"));
  REQUIRE(run_dibs({"status", "--store", test::mysql_uri_for(by_init), "--source", "ip", "--target", "geo"}, out) == 0);
  CHECK_THAT(out, Catch::Contains("done=40 failed=0"));
  s.execute("DROP TABLE " + by_alter);
  s.execute("DROP TABLE " + by_init);
}

TEST_CASE("a MariaDB table without the --source column is refused naming it", "[mysql][own-table]") {
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(test::unique_table("ownbase"));
  sql::mysql_store s(o);
  const auto table = test::unique_table("people_src");
  create_people(s, table);
  std::string out;
  CHECK(run_dibs({"init", "--store", test::mysql_uri_for(table), "--source", "address"}, out) == 2);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("--source reads the field 'address', but table " + table + " has no such column (its columns: id, ip, name)"));
  CHECK(column_count(s, table) == std::optional<std::string>("3"));
  s.execute("DROP TABLE " + table);
}
