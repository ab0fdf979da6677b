// What dibs keeps in a user's table, collection or line lives under names of its own, on every
// store: a table's own `error`, `attempts` and `lock_until` (a collection's own `lock`, `error`,
// `attempts`) are never read nor written, however odd their values; a column or field of the
// user's that bears one of dibs's names is refused by dibs init, named, and never written; and a
// table an earlier dibs prepared under plain names is moved to dibs's names by dibs init, every
// value kept, never given a second set of columns.
#include "support/backend.hpp"
#include "support/own_place.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::run_dibs_within;
using test::db;

// Bounded: a run that never ends (a claim the store refuses, retried every second) fails the test.

// The user's own columns named as an earlier dibs named its own: an error text a few characters
// long, attempts 7 on one row (more than --max-attempts), a lease time of their own, and a lock.
std::vector<test::own_column> users_columns(std::size_t rows) {
  test::own_column error{"error", "VARCHAR(12)", {}, {}}, attempts{"attempts", "INT", {}, {}};
  for (std::size_t i = 0; i < rows; ++i) {
    error.sql_values.push_back("'mine " + std::to_string(i) + "'");
    error.json_values.push_back("\"mine " + std::to_string(i) + "\"");
    attempts.sql_values.push_back(i == 2 ? "7" : "1");
    attempts.json_values.push_back(i == 2 ? "7" : "1");
  }
  std::vector<test::own_column> out{error, attempts};
  if (db.sql) {
    test::own_column until{"lock_until", "VARCHAR(30)", {}, {}};
    for (std::size_t i = 0; i < rows; ++i) until.sql_values.push_back("'tomorrow'");
    out.push_back(until);
  } else {
    test::own_column lock{"lock", "", {}, {}};
    for (std::size_t i = 0; i < rows; ++i) lock.json_values.push_back("{\"owner\": \"bob\"}");
    out.push_back(lock);
  }
  return out;
}
}  // namespace

BACKEND_TEST_CASE("a table's own error, attempts and lease columns are the user's: never read nor written", "[own-table][own-names]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto name = db.unique_name("own_cols");
  test::make_own_place(db, name, test::half_answered(20), users_columns(20));
  auto [rc, out] = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geo_json"});
  INFO(out);
  REQUIRE(rc == 0);
  std::tie(rc, out) = test::dibs_at(db, name, {"enrich", "--url", api.base_url() + "/json/{ip}", "--no-progress"});
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("this run: 10 done, 0 failed"));
  CHECK_THAT(out, !Catch::Contains("claim failed"));
  CHECK(test::count_kept(db, name) == 10);
  // Every value of the user's, as it was.
  CHECK(test::count_where(db, name, "error LIKE 'mine %'", "{\"error\": {\"$regex\": \"^mine \"}}") == 20);
  CHECK(test::count_where(db, name, "attempts = 7", "{\"attempts\": 7}") == 1);
  CHECK(test::count_where(db, name, "attempts = 1", "{\"attempts\": 1}") == 19);
  if (db.sql) {
    CHECK(test::count_where(db, name, "lock_until = 'tomorrow'", "") == 20);
    db.dialect().execute("DROP TABLE " + name);
  } else {
    CHECK(test::count_where(db, name, "", "{\"lock.owner\": \"bob\"}") == 20);
  }
}

BACKEND_TEST_CASE("a column or field of the user's that bears one of dibs's names is refused by dibs init, named, never written",
                  "[own-table][own-names]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto name = db.unique_name("own_taken");
  const std::string taken = db.sql ? "dibs_error" : "_dibs";
  test::own_column theirs{taken, "VARCHAR(20)", {}, {}};
  for (int i = 0; i < 6; ++i) {
    theirs.sql_values.push_back("'theirs'");
    theirs.json_values.push_back("\"theirs\"");
  }
  test::make_own_place(db, name, test::half_answered(6), {theirs});
  auto [rc, out] = test::dibs_at(db, name, {"init", "--source", "ip", "--target", "geo_json"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains(taken) && (Catch::Contains("of its own") || Catch::Contains("of their own")) &&
                      Catch::Contains("rename"));
  if (db.sql) {
    CHECK_THAT(out, Catch::Contains("RENAME COLUMN"));
    std::tie(rc, out) = test::dibs_at(db, name, {"enrich", "--source", "ip", "--target", "geo_json", "--url", api.base_url() + "/json/{ip}",
                                       "--no-progress"});
    CHECK(rc == 2);
  } else {
    CHECK_THAT(out, Catch::Contains("--lock-field"));
  }
  CHECK(api.requests() == 0);
  CHECK(test::count_where(db, name, taken + " = 'theirs'", "{\"" + taken + "\": \"theirs\"}") == 6);
  CHECK(test::count_kept(db, name) == 3);
  if (db.sql) db.dialect().execute("DROP TABLE " + name);
}

BACKEND_TEST_CASE("a table an earlier dibs prepared under plain names is moved to dibs's names by dibs init, every value kept",
                  "[own-table][own-names][upgrade]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto name = db.unique_name("earlier");
  std::string status_rows;
  if (db.sql) {
    auto s = db.dialect();
    for (const auto& statement : db.sql_of().earlier_dibs_table(name)) s.execute(statement);
    for (int i = 1; i <= 10; ++i) s.execute("INSERT INTO " + name + " (ip) VALUES ('8.8." + std::to_string(i) + ".1')");
    // One failed by the earlier run, one done by it, one in the middle of a lease that ran out.
    s.execute("UPDATE " + name + " SET failed_at = " + db.sql_of().thirty_s_ago + ", error = 'HTTP 404', http_status = 404, "
              "attempts = 1 WHERE id = 1");
    s.execute("UPDATE " + name + " SET geo = '{\"kept\": 2}', attempts = 1 WHERE id = 2");
    s.execute("UPDATE " + name + " SET lock_by = 'gone-1-0', lock_token = 5, lock_until = " + db.sql_of().thirty_s_ago +
              ", attempts = 1 WHERE id = 3");
  } else {
    // MongoDB: an earlier dibs kept its lease in `lock`, with its claim index on lock.until.
    auto& t = test::detail::admin(db);
    t.command("{\"drop\": \"" + name + "\"}");
    std::string docs;
    for (int i = 1; i <= 10; ++i)
      docs += std::string(i > 1 ? ", " : "") + "{\"_id\": " + std::to_string(i) + ", \"ip\": \"8.8." + std::to_string(i) +
              ".1\", \"geo\": " + (i == 2 ? "{\"kept\": 2}" : "null") +
              (i == 1 ? ", \"lock\": {\"attempts\": 1, \"failed\": {\"reason\": \"HTTP 404\", \"httpStatus\": 404, \"attempts\": 1}}" : "") +
              "}";
    t.command("{\"insert\": \"" + name + "\", \"documents\": [" + docs + "]}");
    t.command("{\"createIndexes\": \"" + name + "\", \"indexes\": [{\"key\": {\"lock.until\": 1}, \"name\": \"dibs_claim_lock_until\", "
              "\"partialFilterExpression\": {\"geo\": null}}]}");
  }
  const std::vector<std::string> fields{"--source", "ip", "--target", "geo"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), fields.begin(), fields.end());
    return args;
  };
  auto [rc, out] = test::dibs_at(db, name, with({"status"}));
  INFO(out);
  if (db.sql) {
    CHECK(rc == 2);  // nothing claimed under names dibs no longer writes: dibs init moves them
    CHECK_THAT(out, Catch::Contains("the names an earlier dibs gave them") && Catch::Contains("or run: dibs init"));
    std::tie(rc, out) = test::dibs_at(db, name, with({"init"}));
    REQUIRE(rc == 0);
    CHECK_THAT(out, Catch::Contains("renamed the columns an earlier dibs made (lock_by -> dibs_lock_by"));
    CHECK(db.dialect().query_value(db.sql_of().count_columns + name + "'") == std::optional<std::string>(db.name == "MariaDB" ? "12" : "10"));
  }
  std::tie(rc, out) = test::dibs_at(db, name, with({"status"}));
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("1  HTTP 404"));  // the earlier run's failure, with its reason
  CHECK(test::last_line(out) == std::string(db.sql ? "status: pending=7 leased_live=0 leased_expired=1"
                                                   : "status: pending=8 leased_live=0 leased_expired=0") +
                                    " done=1 failed=1");
  std::tie(rc, out) = test::dibs_at(db, name, with({"enrich", "--url", api.base_url() + "/json/{ip}", "--no-progress"}));
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("store now: 9 done, 1 failed, 0 pending, 0 leased"));
  CHECK(api.requests() <= 8 + 1);  // the failed and the done were not asked again
  if (db.sql) db.dialect().execute("DROP TABLE " + name);
}
