// A user's SQL table read against what dibs needs, as both dialects share it (no server): dibs's
// own names, the upgrade of a table an earlier dibs prepared under plain names, a table's own
// column of one of dibs's names, the claim column that reads another target, and what a command
// may do about each (gap_verdict.hpp).
#include <adapters/mysql/mysql_table_schema.hpp>
#include <adapters/postgres/pg_table_schema.hpp>
#include <adapters/sql/gap_verdict.hpp>
#include <adapters/sql/own_columns.hpp>

#include <dibs/missing_table_error.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace sql = dibs::sql_common;

namespace {
// A MariaDB table an earlier dibs prepared for `target` (its plain names; dibs_open reading the
// target and failed_at), with the kinds information_schema gives them, and the user's `extra`.
sql::table_shape earlier_mysql_table(const std::string& target, std::vector<std::pair<std::string, std::string>> extra = {}) {
  sql::table_shape s;
  const std::vector<std::pair<std::string, std::string>> columns{
      {"pid", "varchar,no"},        {"ip", "varchar,yes"},       {"geo_json", "longtext,yes"}, {"lock_by", "varchar,yes"},
      {"lock_token", "bigint,yes"}, {"lock_until", "datetime,yes"}, {"attempts", "int,no"},     {"error", "text,yes"},
      {"http_status", "int,yes"},   {"failed_at", "datetime,yes"}, {"dibs_pick", "tinyint,no"}, {"dibs_open", "tinyint,yes"}};
  for (const auto& [name, kind] : columns) {
    bool replaced = false;
    for (const auto& [xname, xkind] : extra)
      if (xname == name) {
        s.columns.push_back(name);
        s.kinds.push_back(xkind);
        replaced = true;
      }
    if (!replaced) {
      s.columns.push_back(name);
      s.kinds.push_back(kind);
    }
  }
  if (target != "geo_json") {
    s.columns.push_back(target);
    s.kinds.push_back("longtext,yes");
  }
  s.indexes = {"PRIMARY", "dibs_claim"};
  s.claim_reads = dibs::mysql::names_read("if(`" + target + "` is null and `failed_at` is null,1,NULL)");
  return s;
}

dibs::mysql::table_names people(const std::string& target = "geo_json") {
  dibs::mysql::table_names n{"people", "ip", target};
  n.key.column = "pid";
  return n;
}
}  // namespace

TEST_CASE("dibs's columns all bear its prefix, and the run writes only those and the target", "[sql][schema]") {
  const auto needs = dibs::mysql::table_needs_of(people());
  CHECK(needs.own == std::vector<std::string>{"dibs_lock_by", "dibs_lock_token", "dibs_lock_until", "dibs_attempts", "dibs_error",
                                              "dibs_http_status", "dibs_failed_at", "dibs_pick", "dibs_open"});
  const auto pg_needs = dibs::pg::table_needs_of(dibs::pg::table_names{"people", "ip", "geo"});
  for (const auto& name : pg_needs.own) CHECK_THAT(name, Catch::StartsWith("dibs_"));
  CHECK(pg_needs.own.size() == 7);
  CHECK(sql::written_columns().size() == 7);
}

TEST_CASE("a table's own error and attempts are not dibs's: its columns are added beside them", "[sql][schema]") {
  const auto n = people("geo");
  sql::table_shape s{{"pid", "ip", "error", "attempts"}, {"PRIMARY"}, {"varchar,no", "varchar,yes", "varchar,yes", "int,yes"}, {}};
  const auto gap = sql::find_gap(n.source, dibs::mysql::table_needs_of(n), s);
  CHECK(gap.taken.empty());
  CHECK(gap.renames.empty());
  CHECK(gap.columns.front() == "geo");
  CHECK(std::find(gap.columns.begin(), gap.columns.end(), "dibs_error") != gap.columns.end());
  const auto alter = dibs::mysql::alter_table(n, gap);
  CHECK_THAT(alter, !Catch::Contains("ADD COLUMN `error`") && !Catch::Contains("RENAME"));
}

TEST_CASE("a table an earlier dibs prepared is renamed to dibs's names, its values kept, never given a second set",
          "[sql][schema]") {
  const auto n = people();
  const auto needs = dibs::mysql::table_needs_of(n);
  const auto gap = sql::find_gap(n.source, needs, earlier_mysql_table("geo_json"));
  CHECK(gap.renames.size() == 7);
  CHECK(gap.renames.front() == std::pair<std::string, std::string>{"lock_by", "dibs_lock_by"});
  CHECK(gap.columns.empty());  // every column of dibs's is there, under its earlier name
  CHECK(gap.taken.empty());
  CHECK_FALSE(gap.claim_stale);  // it reads failed_at, which becomes dibs_failed_at
  const auto alter = dibs::mysql::alter_table(n, gap);
  CHECK_THAT(alter, Catch::Contains("RENAME COLUMN `failed_at` TO `dibs_failed_at`"));
  CHECK_THAT(alter, !Catch::Contains("ADD COLUMN `dibs_error`"));
  // dibs_open is made again on the new names (MySQL 8 refuses a rename under a generated column).
  CHECK_THAT(alter, Catch::StartsWith("ALTER TABLE `people` DROP KEY `dibs_claim`, DROP COLUMN `dibs_open`, RENAME COLUMN"));
  CHECK_THAT(alter, Catch::EndsWith("ADD COLUMN `dibs_open` TINYINT AS (IF(`geo_json` IS NULL AND `dibs_failed_at` IS NULL, 1, NULL)) "
                                    "STORED, ADD KEY `dibs_claim` (`dibs_open`, `dibs_pick`, `dibs_lock_until`)"));
  CHECK(dibs::mysql::table_statements(n, gap).size() == 1);
  CHECK(sql::moves_note("people", gap, needs) ==
        "table people: renamed the columns an earlier dibs made (lock_by -> dibs_lock_by, lock_token -> dibs_lock_token, "
        "lock_until -> dibs_lock_until, attempts -> dibs_attempts, error -> dibs_error, http_status -> dibs_http_status, "
        "failed_at -> dibs_failed_at), their values kept");
}

TEST_CASE("in an earlier dibs's table, the user's own error and attempts stay theirs, and its reasons are copied to dibs_error",
          "[sql][schema]") {
  const auto n = people();
  const auto needs = dibs::mysql::table_needs_of(n);
  const auto gap = sql::find_gap(n.source, needs, earlier_mysql_table("geo_json", {{"error", "varchar,yes"}, {"attempts", "int,yes"}}));
  CHECK(gap.left_to_user == std::vector<std::string>{"attempts", "error"});
  CHECK(gap.renames.size() == 5);
  CHECK(gap.columns == std::vector<std::string>{"dibs_attempts", "dibs_error"});
  const auto statements = dibs::mysql::table_statements(n, gap);
  REQUIRE(statements.size() == 2);
  CHECK(statements[1] == "UPDATE `people` SET `dibs_error` = `error` WHERE `dibs_failed_at` IS NOT NULL AND `dibs_error` IS NULL");
  CHECK_THAT(sql::moves_note("people", gap, needs),
             Catch::Contains("left attempts, error as they are: the table's own (not of the type dibs gave it)"));
}

TEST_CASE("a table's own column of one of dibs's names is refused by every command, dibs init too", "[sql][schema]") {
  const auto n = people("geo");
  const auto needs = dibs::mysql::table_needs_of(n);
  sql::table_shape s{{"pid", "ip", "dibs_error"}, {"PRIMARY"}, {"varchar,no", "varchar,yes", "varchar,yes"}, {}};
  const auto gap = sql::find_gap(n.source, needs, s);
  CHECK(gap.taken == std::vector<std::string>{"dibs_error"});
  sql::gap_context c{"people", "ip", true, true, "", dibs::mysql::rename_example(n, "dibs_error"), "dibs init"};
  CHECK_THROWS_WITH(sql::judge_gap(gap, needs, s, c),
                    "table people has column of its own named as dibs names its own (dibs_error): dibs would write into it, "
                    "so it leaves this table alone; rename yours (ALTER TABLE `people` RENAME COLUMN `dibs_error` TO "
                    "`my_dibs_error`), then run dibs init again");
  // The same table once dibs init recorded it prepared it: a column dibs added since is added.
  CHECK(sql::find_gap(n.source, needs, s, true).taken.empty());
}

TEST_CASE("the claim column that reads another target is moved by dibs init, and refused by the others", "[sql][schema]") {
  // An earlier dibs init with --target geojson, then one with geo_json: dibs_open still reads geojson.
  const auto n = people("geo_json");
  const auto needs = dibs::mysql::table_needs_of(n);
  auto s = earlier_mysql_table("geojson");
  const auto gap = sql::find_gap(n.source, needs, s);
  CHECK(gap.claim_stale);
  CHECK(gap.claim_reads_now == std::vector<std::string>{"geojson", "dibs_failed_at"});
  const auto statements = dibs::mysql::shown_statements(n, gap);
  CHECK_THAT(statements, Catch::Contains("ADD COLUMN `dibs_open` TINYINT AS (IF(`geo_json` IS NULL"));
  sql::gap_context enrich{"people", "ip", false, false, statements, "", "dibs init --store 'x'"};
  CHECK_THROWS_WITH(sql::judge_gap(gap, needs, s, enrich),
                    Catch::Contains("it has the claim column dibs_open reading geojson, not the target geo_json; change it with: "
                                    "ALTER TABLE `people` DROP KEY") &&
                        Catch::EndsWith("or run: dibs init --store 'x'"));
  sql::gap_context init = enrich;
  init.may_change = true;
  CHECK(sql::judge_gap(gap, needs, s, init));
  CHECK_THAT(sql::moves_note("people", gap, needs), Catch::EndsWith("moved the claim column dibs_open from geojson to the target geo_json"));
}

TEST_CASE("a --target that is not a column is refused unless dibs init is told it is new", "[sql][schema]") {
  const auto n = people("geojson");
  const auto needs = dibs::mysql::table_needs_of(n);
  sql::table_shape s{{"pid", "ip", "geo_json"}, {"PRIMARY"}, {}, {}};
  const auto gap = sql::find_gap(n.source, needs, s);
  CHECK(gap.target_missing);
  sql::gap_context init{"people", "ip", true, false, "", "", "dibs init"};
  try {
    sql::judge_gap(gap, needs, s, init);
    FAIL("not refused");
  } catch (const dibs::missing_table_error& e) {
    CHECK(e.kind == "target column");
    CHECK(e.name == "geojson");
    CHECK(e.existing == s.columns);  // the CLI's "did you mean" picks geo_json among them
    CHECK_THAT(e.advice, Catch::Contains("new_target"));
  }
  init.target_is_new = true;
  CHECK(sql::judge_gap(gap, needs, s, init));
  // Another command refuses the table for all it lacks (dibs's columns too), with the statements.
  sql::gap_context enrich{"people", "ip", false, false, "ALTER ...;", "", "dibs init"};
  CHECK_THROWS_WITH(sql::judge_gap(gap, needs, s, enrich), Catch::StartsWith("table people lacks what dibs keeps its claims in (geojson, dibs_lock_by"));
}

TEST_CASE("what a claim object reads, from the server's own text", "[sql][schema]") {
  CHECK(dibs::mysql::names_read("if(`geo` is null and `dibs_failed_at` is null,1,NULL)") ==
        std::vector<std::string>{"geo", "dibs_failed_at"});
  CHECK(dibs::mysql::names_read("if(`we``ird` is null,1,NULL)") == std::vector<std::string>{"we`ird"});
  CHECK(dibs::pg::predicate_names("CREATE INDEX people_dibs_open ON public.people USING btree (dibs_lock_until NULLS FIRST, pid) "
                                  "WHERE ((geo IS NULL) AND (dibs_failed_at IS NULL))") ==
        std::vector<std::string>{"geo", "dibs_failed_at"});
  CHECK(dibs::pg::predicate_names("CREATE INDEX x ON public.t USING btree (a) WHERE ((\"originatingIp\" IS NULL) AND (failed_at IS NULL))") ==
        std::vector<std::string>{"originatingIp", "failed_at"});
  CHECK(dibs::pg::predicate_names("CREATE INDEX x ON public.t USING btree (a)").empty());
}

TEST_CASE("a PostgreSQL table an earlier dibs prepared is renamed one column a statement, and its index kept", "[pg][schema]") {
  dibs::pg::table_names n{"jobs", "originatingIp", "location"};
  const auto needs = dibs::pg::table_needs_of(n);
  sql::table_shape s;
  const std::vector<std::pair<std::string, std::string>> columns{
      {"id", "int8,t"},           {"originatingIp", "varchar,f"}, {"location", "jsonb,f"},   {"lock_by", "varchar,f"},
      {"lock_token", "int8,f"},   {"lock_until", "timestamptz,f"}, {"attempts", "int4,t"},  {"error", "text,f"},
      {"http_status", "int4,f"},  {"failed_at", "timestamptz,f"}};
  for (const auto& [name, kind] : columns) {
    s.columns.push_back(name);
    s.kinds.push_back(kind);
  }
  s.indexes = {"jobs_pkey", "jobs_dibs_open"};
  s.claim_reads = {"location", "failed_at"};
  const auto gap = sql::find_gap(n.source, needs, s);
  CHECK(gap.renames.size() == 7);
  CHECK_FALSE(gap.claim_stale);
  const auto statements = dibs::pg::alter_table(n, gap);
  CHECK_THAT(statements, Catch::StartsWith("ALTER TABLE \"jobs\" RENAME COLUMN \"lock_by\" TO \"dibs_lock_by\"; ALTER TABLE"));
  CHECK_THAT(statements, !Catch::Contains("INDEX"));  // PostgreSQL's index follows the renames
}

TEST_CASE("a URI that names no table is refused naming what it lacks, not a table jobs the user never named", "[sql][schema]") {
  const auto said = sql::unnamed_table_refusal("crm", {"people", "orders"});
  CHECK_THAT(said, Catch::Contains("store names no table: add ?table=NAME") && Catch::Contains("database crm has none") &&
                       Catch::Contains("its tables: people, orders"));
  CHECK_THAT(sql::unnamed_table_refusal("empty", {}), Catch::EndsWith("its tables: none)"));
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) many.push_back("t" + std::to_string(i));
  CHECK_THAT(sql::unnamed_table_refusal("big", many), Catch::Contains("t11, ... (20 in all)") && !Catch::Contains("t12"));
}
