// The user's own table on a SQL store, as users meet it (a missing one: missing_place.cpp): a
// table without dibs's columns is refused with the statements that add them; dibs init adds
// them, and dibs enrich then works; a table without the --source column is refused naming it.
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include "engine/src/uri_redact.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::run_dibs;
using test::db;

std::optional<std::string> column_count(test::backend_table& s, const std::string& table) {
  return s.query_value(db.sql_of().count_columns + table + "'");
}
// The user's table: their own id, source and another column, 40 rows of public addresses.
void create_people(test::backend_table& s, const std::string& table) {
  s.execute("CREATE TABLE " + table + " " + db.sql_of().people_table);
  std::string values;
  for (int i = 0; i < 40; ++i) values += std::string(i ? "," : "") + "('8.8." + std::to_string(i) + ".1', 'n" + std::to_string(i) + "')";
  s.execute("INSERT INTO " + table + " (ip, name) VALUES " + values);
}
std::string uri_for(const std::string& table) { return db.uri_for(table); }
}  // namespace

BACKEND_TEST_CASE("a table without dibs's columns is refused with the statements that, like dibs init, make it work",
                  "[own-table]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  auto s = db.open(db.unique_name("ownbase"));
  const auto by_alter = db.unique_name("people_alter");
  const auto by_init = db.unique_name("people_init");
  create_people(s, by_alter);
  create_people(s, by_init);
  const auto alter_uri = uri_for(by_alter), init_uri = uri_for(by_init);
  const std::vector<std::string> fields{"--source", "ip", "--target", "geo"};
  auto enrich = [&](const std::string& uri, std::string& out) {
    std::vector<std::string> args{"enrich", "--store", uri, "--url", api.base_url() + "/json/{ip}", "--no-progress"};
    args.insert(args.end(), fields.begin(), fields.end());
    return run_dibs(args, out);
  };
  auto answered = [&](const std::string& table, const std::string& also) {
    return s.query_value("SELECT COUNT(*) FROM " + table + " WHERE " + db.sql_of().answer_names_ip + also);
  };

  std::string out;
  REQUIRE(enrich(alter_uri, out) == 2);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("table " + by_alter + " lacks what dibs keeps its claims in " + db.facts.lacks(by_alter)));
  CHECK_THAT(out, Catch::Contains("or run: dibs init --store '" + redact_uri(alter_uri) + "' --source ip --target geo"));
  CHECK(column_count(s, by_alter) == std::optional<std::string>("3"));  // untouched
  CHECK(api.requests() == 0);
  // The statements it printed are the ones to run.
  const auto from = out.find("add it with: ");
  const auto to = out.find(db.facts.before_or_run);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const auto statements = out.substr(from + 13, to - from - 13);
  CHECK_THAT(statements, Catch::StartsWith(db.facts.alter_begins(by_alter)));
  s.execute(statements);
  REQUIRE(enrich(alter_uri, out) == 0);
  CHECK(answered(by_alter, "") == std::optional<std::string>("40"));

  // dibs init adds them (twice: the second changes nothing); the user's rows and columns stay.
  // Its target, geo, is a column the table does not have yet: the user says it is new.
  std::vector<std::string> init{"init", "--store", init_uri, "--new-target"};
  init.insert(init.end(), fields.begin(), fields.end());
  REQUIRE(run_dibs(init, out) == 0);
  CHECK_THAT(out, Catch::Contains("init: "));
  REQUIRE(run_dibs(init, out) == 0);
  CHECK(column_count(s, by_init) == std::optional<std::string>(std::to_string(db.facts.columns_after_init)));
  REQUIRE(enrich(init_uri, out) == 0);
  CHECK(answered(by_init, " AND name LIKE 'n%'") == std::optional<std::string>("40"));
  REQUIRE(run_dibs({"status", "--store", init_uri, "--source", "ip", "--target", "geo"}, out) == 0);
  CHECK_THAT(out, Catch::Contains("done=40 failed=0"));
  s.execute("DROP TABLE " + by_alter);
  s.execute("DROP TABLE " + by_init);
}

BACKEND_TEST_CASE("a table without the --source column is refused naming it", "[own-table]") {
  auto s = db.open(db.unique_name("ownbase"));
  const auto table = db.unique_name("people_src");
  create_people(s, table);
  std::string out;
  CHECK(run_dibs({"init", "--store", uri_for(table), "--source", "address"}, out) == 2);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("--source reads the field 'address', but table " + table + " has no such column (its columns: id, ip, name)"));
  CHECK(column_count(s, table) == std::optional<std::string>("3"));
  s.execute("DROP TABLE " + table);
}
