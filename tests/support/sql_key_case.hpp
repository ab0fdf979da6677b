// Users' own tables keyed as real tables are (uuid, varchar, snowflake-sized and negative
// bigints, ...), the same on every SQL store: onboarded with `dibs init` and drained by the real
// `dibs enrich`, marking and then deleting; and a table dibs can't address is refused at `init`
// and at start with exit 2 and one line. The store's side comes in an sql_dialect (each SQL
// backend's dialect(): support/backend.hpp).
#pragma once

#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dibs::test {


// One user table: `key_column key_type PRIMARY KEY`, an `ip` and a note of the user's, one row
// per key in `key_literals` (SQL literals). Every run is bounded: a run that never ends fails.
inline void check_keyed_table(const sql_dialect& s, const std::string& table, const std::string& key_column,
                       const std::string& key_type, const std::vector<std::string>& key_literals) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  INFO("key " << key_column << " " << key_type);
  s.execute("CREATE TABLE " + table + " (" + key_column + " " + key_type + " PRIMARY KEY, ip VARCHAR(64), note VARCHAR(20))");
  std::string values;
  for (std::size_t i = 0; i < key_literals.size(); ++i)
    values += (i ? ", (" : "(") + key_literals[i] + ", '8.8." + std::to_string(i) + ".1', 'mine')";
  s.execute("INSERT INTO " + table + " (" + key_column + ", ip, note) VALUES " + values);
  const auto n = std::to_string(key_literals.size());
  const std::vector<std::string> fields{"--source", "ip", "--target", "geo"};
  auto with_fields = [&](std::vector<std::string> args) {
    args.insert(args.end(), fields.begin(), fields.end());
    return args;
  };
  const auto uri = s.uri_for(table);

  auto [rc, out] = run_dibs_within(std::chrono::seconds(60), with_fields({"init", "--store", uri, "--new-target"}));
  INFO(out);
  REQUIRE(rc == 0);
  CHECK_THAT(out, Catch::Contains(": ready"));
  auto enrich = [&](const std::string& on_done) {
    return run_dibs_within(std::chrono::seconds(60),
                           with_fields({"enrich", "--store", uri, "--url", api.base_url() + "/json/{ip}", "--no-progress",
                                        "--on-done", on_done, "--lease", "10s"}));
  };
  std::tie(rc, out) = enrich("mark");
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("store now: " + n + " done, 0 failed, 0 pending, 0 leased"));
  CHECK_THAT(out, !Catch::Contains("lease lost"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE " + s.answer_names_ip + " AND note = 'mine'") ==
        std::optional<std::string>(n));
  CHECK(api.requests() <= key_literals.size() + 1);  // one call each (and the pre-flight's), never a loop

  // Open again, then done by deleting: the user's key addresses the DELETE too.
  s.execute("UPDATE " + table + " SET geo = NULL");
  std::tie(rc, out) = enrich("delete");
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, !Catch::Contains("lease lost"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table) == std::optional<std::string>("0"));
  s.execute("DROP TABLE " + table);
}

// A table whose rows dibs can't address by one key (`setup` makes and fills it): `init` and `enrich`
// each exit 2 within seconds with one line that says why and names `advice`; the API is never
// called and nothing of the table changes.
inline void check_unaddressable_table(const sql_dialect& s, const std::string& table,
                               const std::vector<std::string>& setup, const std::string& why, const std::string& advice) {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  for (const auto& statement : setup) s.execute(statement);
  const auto columns_before = s.query_value("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = '" + table + "'");
  const auto uri = s.uri_for(table);
  for (const auto& cmd : {std::string("init"), std::string("enrich")}) {
    std::vector<std::string> args{cmd, "--store", uri, "--source", "ip", "--target", "geo"};
    if (cmd == "enrich") args.insert(args.end(), {"--url", api.base_url() + "/json/{ip}", "--no-progress"});
    auto [rc, out] = run_dibs_within(std::chrono::seconds(30), args);
    INFO(cmd << ": " << out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains(why));
    CHECK_THAT(out, Catch::Contains(advice));
    CHECK(out.find('\n') == out.rfind('\n'));  // one line
  }
  CHECK(api.requests() == 0);
  CHECK(s.query_value("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = '" + table + "'") == columns_before);
  s.execute("DROP TABLE " + table);
}

}  // namespace dibs::test
