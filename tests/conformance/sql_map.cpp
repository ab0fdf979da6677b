// --map into a SQL table's own typed columns (the user's: a VARCHAR, a DOUBLE, a JSON column, an
// INTEGER) from a real API's nested answer (tests/servers/shaped_api.py): each value converted by
// the server to its column's type; a value a column can't hold fails that row alone, with the
// server's reason, and the run goes on.
#include "http_servers/shaped_api.hpp"
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::db;
}  // namespace

BACKEND_TEST_CASE("a --map writes nested answer members into typed columns, and a value that does not fit fails its row alone",
                  "[map][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("mapped");
  const auto& table = s.name;
  const auto& source = db.sql_of().source_column;
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "0"});
  REQUIRE(seed.finish(out) == 0);
  const bool pg = std::string(DIBS_BACKEND_NAME) == "PostgreSQL";
  s.execute("ALTER TABLE " + table + " ADD COLUMN country VARCHAR(64), ADD COLUMN lat DOUBLE PRECISION, ADD COLUMN loc " +
            (pg ? "jsonb" : "JSON") + ", ADD COLUMN asn INTEGER, ADD COLUMN qnum INTEGER, ADD COLUMN nothing INTEGER");
  s.execute("INSERT INTO " + table + " (" + source + ") VALUES ('101'), ('102'), ('abc')");
  out.clear();
  test::child_process run({test::dibs_binary(), "enrich", "--store", s.uri(), "--url", api.base_url() + "/geo/{originatingIp}",
                           "--map", "country=/country,lat=/loc/lat,loc=/loc,asn=/asn,qnum=/query,nothing=/nope",
                           "--no-progress", "--no-preflight"},
                          true);
  const int rc = run.finish(out);
  INFO(out);
  CHECK(rc == 1);  // 'abc' is no INTEGER: that row failed, the others are done
  CHECK_THAT(out, Catch::Contains("summary: completed=2 failed=1"));
  const auto where = " FROM " + table + " WHERE " + source + " = '101'";
  CHECK(s.query_value("SELECT country" + where) == std::optional<std::string>("Freedonia"));
  CHECK(s.query_value("SELECT lat * 2" + where) == std::optional<std::string>("97"));  // a number: arithmetic works
  CHECK(s.query_value("SELECT asn + 1" + where) == std::optional<std::string>("64501"));
  CHECK(s.query_value("SELECT qnum" + where) == std::optional<std::string>("101"));
  CHECK(s.query_value("SELECT " + db.sql_of().json_text("loc", "lon") + where) == std::optional<std::string>("-2.25"));
  CHECK(s.query_value("SELECT COUNT(*)" + where + " AND nothing IS NULL") == std::optional<std::string>("1"));
  // The target: the mapped values, the mark of a done row.
  CHECK(s.query_value("SELECT " + db.sql_of().json_text("location", "country") + where) == std::optional<std::string>("Freedonia"));
  // The row whose value did not fit: failed with the server's words, nothing of it written.
  const auto bad = " FROM " + table + " WHERE " + source + " = 'abc'";
  CHECK(s.query_value("SELECT COUNT(*)" + bad + " AND dibs_failed_at IS NOT NULL AND location IS NULL AND country IS NULL") ==
        std::optional<std::string>("1"));
  CHECK(s.query_value("SELECT dibs_error" + bad).value_or("").find("abc") != std::string::npos);
}

BACKEND_TEST_CASE("a --map onto the key, the source, the target, a dibs column or one column twice is refused at start",
                  "[map][e2e]") {
  // Before: MySQL rewrote the primary key with `--map id=/x`; PostgreSQL refused every batch's
  // UPDATE ("multiple assignments to same column") and left its rows leased.
  test::shaped_api api;
  auto s = db.fresh("map_names");
  std::string out;
  test::child_process seed({test::dibs_binary(), "seed", "--store", s.uri(), "--docs", "3"});
  REQUIRE(seed.finish(out) == 0);
  s.execute("ALTER TABLE " + s.name + " ADD COLUMN country VARCHAR(64)");
  for (const auto& [map, says] : std::vector<std::pair<std::string, std::string>>{
           {"id=/asn", "is the key items are addressed by"},
           {"originatingIp=/query", "is the --source field"},
           {"location=/country", "is the --target field"},
           {"dibs_error=/country", "a name dibs keeps its own data under"},
           {"country=/country,country=/city", "is mapped twice"}}) {
    INFO(map);
    out.clear();
    test::child_process run({test::dibs_binary(), "enrich", "--store", s.uri(), "--url", api.base_url() + "/geo/{originatingIp}",
                             "--map", map, "--no-progress"},
                            true);
    CHECK(run.finish(out) == 2);
    CHECK_THAT(out, Catch::Contains(says));
  }
  CHECK(api.requests().empty());  // refused before any call
  CHECK(s.stats_blocking().pending == 3);

  // A dry run shows the mapped columns it would set, beside the target.
  out.clear();
  test::child_process dry({test::dibs_binary(), "enrich", "--store", s.uri(), "--url", api.base_url() + "/geo/{originatingIp}",
                           "--map", "country=/country", "--dry-run", "1"},
                          true);
  CHECK(dry.finish(out) == 0);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("; and the columns country = \"Freedonia\""));
}

namespace {
// The column's type as the catalog names it, lower case ("varchar", "double", "double precision", "jsonb").
std::optional<std::string> column_type(test::backend_table& s, const std::string& column) {
  const bool pg = std::string(DIBS_BACKEND_NAME) == "PostgreSQL";
  return s.query_value(std::string("SELECT LOWER(data_type) FROM information_schema.columns WHERE table_name = '") + s.name +
                       "' AND column_name = '" + column + "'" + (pg ? " AND table_schema = current_schema()" : " AND table_schema = DATABASE()"));
}

std::pair<int, std::string> dibs_run(std::vector<std::string> args) {
  args.insert(args.begin(), test::dibs_binary());
  std::string out;
  test::child_process p(args, true);
  const int rc = p.finish(out);
  return {rc, out};
}
}  // namespace

BACKEND_TEST_CASE("dibs init --map adds typed columns and records the mapping, and enrich then needs no --map", "[map][init][e2e]") {
  test::shaped_api api;
  auto s = db.fresh("init_map");
  const auto& source = db.sql_of().source_column;
  REQUIRE(dibs_run({"seed", "--store", s.uri(), "--docs", "0"}).first == 0);
  s.execute("INSERT INTO " + s.name + " (" + source + ") VALUES ('101'), ('102')");
  const bool pg = std::string(DIBS_BACKEND_NAME) == "PostgreSQL";
  const std::string map = std::string("country=/country:VARCHAR(64),lat=/loc/lat:DOUBLE PRECISION,loc=/loc:") + (pg ? "JSONB" : "JSON");

  // At info, dibs init says each statement that changes the table ("changing table ...").
  auto [rc, out] = dibs_run({"--log-level", "info", "init", "--store", s.uri(), "--map", map});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains("changing table"));
  CHECK_THAT(out, Catch::Contains("--map country=/country,lat=/loc/lat,loc=/loc"));
  CHECK(column_type(s, "country") == std::optional<std::string>(pg ? "character varying" : "varchar"));
  CHECK(column_type(s, "lat") == std::optional<std::string>(pg ? "double precision" : "double"));
  // MariaDB keeps JSON as LONGTEXT (with a JSON_VALID check); MySQL as json.
  CHECK_THAT(column_type(s, "loc").value_or(""), Catch::Matches(pg ? "jsonb" : "json|longtext"));
  const auto columns_before = s.query_value(db.sql_of().count_columns + s.name + "'");

  // Again, the same: nothing changes (no statement, no column).
  std::tie(rc, out) = dibs_run({"--log-level", "info", "init", "--store", s.uri(), "--map", map});
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, !Catch::Contains("changing table"));
  CHECK(s.query_value(db.sql_of().count_columns + s.name + "'") == columns_before);

  // enrich with --store and --url only: the recorded mapping fills the columns.
  std::tie(rc, out) = dibs_run({"enrich", "--store", s.uri(), "--url", api.base_url() + "/geo/{originatingIp}", "--no-progress"});
  INFO(out);
  CHECK(rc == 0);
  const auto where = " FROM " + s.name + " WHERE " + source + " = '101'";
  CHECK(s.query_value("SELECT country" + where) == std::optional<std::string>("Freedonia"));
  CHECK(s.query_value("SELECT lat * 2" + where) == std::optional<std::string>("97"));
  CHECK(s.query_value("SELECT " + db.sql_of().json_text("loc", "lon") + where) == std::optional<std::string>("-2.25"));

  // Another --map than the record's: refused with both, nothing called.
  const auto asked = api.requests().size();
  std::tie(rc, out) = dibs_run({"enrich", "--store", s.uri(), "--url", api.base_url() + "/geo/{originatingIp}", "--map",
                                "country=/city", "--no-progress"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--map country=/city contradicts") && Catch::Contains("country=/country,lat=/loc/lat,loc=/loc"));
  CHECK(api.requests().size() == asked);

  // The same mapping in another order is the record's; --map '' gives the mapping away.
  std::tie(rc, out) = dibs_run({"init", "--store", s.uri(), "--map", "loc=/loc,lat=/loc/lat,country=/country"});
  CHECK(rc == 0);
  const auto recorded_map = "SELECT COUNT(*) FROM dibs_settings WHERE table_name = '" + s.name + "' AND name = 'map'";
  CHECK(s.query_value(recorded_map) == std::optional<std::string>("1"));
  std::tie(rc, out) = dibs_run({"init", "--store", s.uri(), "--map", ""});
  INFO(out);
  CHECK(rc == 0);
  CHECK(s.query_value(recorded_map) == std::optional<std::string>("0"));
}

BACKEND_TEST_CASE("dibs init --map refuses a name that is the key, the target or dibs's own, and a new column without a type",
                  "[map][init][e2e]") {
  auto s = db.fresh("init_map_names");
  REQUIRE(dibs_run({"seed", "--store", s.uri(), "--docs", "2"}).first == 0);
  const auto columns_before = s.query_value(db.sql_of().count_columns + s.name + "'");
  for (const auto& [map, says] : std::vector<std::pair<std::string, std::string>>{
           {"id=/asn:BIGINT", "is the key items are addressed by"},
           {"location=/country:TEXT", "is the --target field"},
           {"dibs_attempts=/n:INT", "a name dibs keeps its own data under"},
           {"a=/x:TEXT,a=/y:TEXT", "mapped twice"},
           {"country=/country", "give it a type"},
           {"bad=/x:TEXT; DROP TABLE x", "has no column"}}) {
    INFO(map);
    const auto [rc, out] = dibs_run({"init", "--store", s.uri(), "--map", map});
    INFO(out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains(says));
  }
  CHECK(s.query_value(db.sql_of().count_columns + s.name + "'") == columns_before);  // no column added
  CHECK(s.stats_blocking().pending == 2);
  // A new table is refused before it is made.
  const auto fresh = db.unique_name("init_map_new");
  const auto [rc, out] = dibs_run({"init", "--store", db.uri_for(fresh), "--new-table", "--map", "dibs_x=/a:TEXT"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("dibs keeps its own data under"));
  CHECK_FALSE(db.exists(fresh));
}
