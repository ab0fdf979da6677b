// `dibs retry` and `dibs status`'s failure breakdown, read without a server: the SQL, the MongoDB
// filters and pipeline, file mode's journal records and failed lines, --since, and the report.
#include "support/text.hpp"
#include "apps/dibs/end_line.hpp"
#include "apps/dibs/since_flag.hpp"
#include "apps/dibs/status_report.hpp"
#include <adapters/jsonl/failed_lines.hpp>
#include <adapters/jsonl/journal_format.hpp>
#include <adapters/mongo/failed_documents.hpp>
#include <adapters/mysql/mysql_retry.hpp>
#include <adapters/postgres/pg_retry.hpp>

#include <simdjson.h>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dibs;

namespace {
using test::compact;
}  // namespace

TEST_CASE("MySQL: retry resets only failed rows, attempts and lease included", "[retry][sql]") {
  mysql::table_names n;
  CHECK(mysql::retry_failed_rows(n, {}) ==
        "UPDATE `jobs` SET `dibs_failed_at` = NULL, `dibs_error` = NULL, `dibs_http_status` = NULL, `dibs_attempts` = 0, `dibs_lock_by` = NULL, "
        "`dibs_lock_token` = NULL, `dibs_lock_until` = NULL WHERE `location` IS NULL AND `dibs_failed_at` IS NOT NULL");
  mysql::failed_rows which;
  which.reason_quoted = "'50%_off'";
  which.since_epoch_us = 1'700'000'000'000'001;
  CHECK(mysql::failed_condition(n, which) ==
        "`location` IS NULL AND `dibs_failed_at` IS NOT NULL AND LOCATE('50%_off', `dibs_error`) > 0 AND `dibs_failed_at` >= "
        "FROM_UNIXTIME(1700000000.000001)");
  mysql::failed_rows exact;  // the dashboard's "Retry these": the group failure_reasons counted
  exact.reason_is_quoted = "'HTTP 404'";
  CHECK(mysql::failed_condition(n, exact) ==
        "`location` IS NULL AND `dibs_failed_at` IS NOT NULL AND COALESCE(`dibs_error`, '') = 'HTTP 404'");
  mysql::failed_rows ago;
  ago.since_ago_us = 7'200'000'000;
  CHECK(mysql::failed_condition(n, ago) ==
        "`location` IS NULL AND `dibs_failed_at` IS NOT NULL AND `dibs_failed_at` >= NOW(6) - INTERVAL 7200000000 MICROSECOND");
  CHECK(mysql::failure_reasons(n, 10) ==
        "SELECT COALESCE(`dibs_error`, ''), COUNT(*), MIN(`id`), MAX(`id`) FROM `jobs` WHERE `location` IS NULL AND "
        "`dibs_failed_at` IS NOT NULL GROUP BY COALESCE(`dibs_error`, '') ORDER BY COUNT(*) DESC, COALESCE(`dibs_error`, '') LIMIT 10");
}

TEST_CASE("PostgreSQL: retry's values travel as parameters", "[retry][pg]") {
  pg::table_names n;
  pg::failed_rows which;
  which.reason = "HTTP 404'; DROP TABLE jobs; --";
  which.since_ago_us = 60'000'000;
  const auto st = pg::retry_failed_rows(n, which);
  CHECK(st.sql ==
        "UPDATE \"jobs\" SET \"dibs_failed_at\" = NULL, \"dibs_error\" = NULL, \"dibs_http_status\" = NULL, \"dibs_attempts\" = 0, "
        "\"dibs_lock_by\" = NULL, \"dibs_lock_token\" = NULL, \"dibs_lock_until\" = NULL WHERE \"location\" IS NULL AND \"dibs_failed_at\" "
        "IS NOT NULL AND strpos(\"dibs_error\", $1::text) > 0 AND \"dibs_failed_at\" >= now() - $2::bigint * interval '1 "
        "microsecond'");
  REQUIRE(st.params.size() == 2);
  CHECK(*st.params[0] == which.reason);
  CHECK(*st.params[1] == "60000000");
  pg::failed_rows exact;
  exact.reason_is = "HTTP 404";
  const auto is = pg::retry_failed_rows(n, exact);
  CHECK(is.sql.find("IS NOT NULL AND coalesce(\"dibs_error\", '') = $1::text") != std::string::npos);
  CHECK(*is.params.at(0) == "HTTP 404");
  const auto all = pg::retry_failed_rows(n, {});
  CHECK(all.params.empty());
  CHECK(all.sql.find("WHERE \"location\" IS NULL AND \"dibs_failed_at\" IS NOT NULL") != std::string::npos);
  const auto reasons = pg::failure_reasons(n, 5);
  CHECK(reasons.sql.find("GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $1") != std::string::npos);
  CHECK(*reasons.params.at(0) == "5");
}

TEST_CASE("MongoDB: retry selects failed documents and unsets the whole lock", "[retry][mongo]") {
  mongo::field_names f;
  CHECK(compact(mongo::to_json(mongo::failed_selection_filter(f, "", std::nullopt).get())) ==
        R"({"location":null,"_dibs.failed":{"$exists":true}})");
  const auto t0 = store_time{} + std::chrono::milliseconds(1'700'000'000'000);
  CHECK(compact(mongo::to_json(mongo::failed_selection_filter(f, "HTTP 404 (x)", t0).get())) ==
        R"j({"location":null,"_dibs.failed":{"$exists":true},"_dibs.failed.reason":{"$regex":"HTTP404\\(x\\)"},)j"
        R"j("_dibs.failed.at":{"$gte":{"$date":{"$numberLong":"1700000000000"}}}})j");
  CHECK(compact(mongo::to_json(mongo::failed_selection_filter(f, "", std::nullopt, std::string("HTTP 404")).get())) ==
        R"({"location":null,"_dibs.failed":{"$exists":true},"_dibs.failed.reason":{"$eq":"HTTP404"}})");
  // "" is also the group of documents failed without a reason.
  CHECK(compact(mongo::to_json(mongo::failed_selection_filter(f, "", std::nullopt, std::string()).get())) ==
        R"({"location":null,"_dibs.failed":{"$exists":true},"_dibs.failed.reason":{"$in":["",null]}})");
  CHECK(compact(mongo::to_json(mongo::retry_update(f).get())) == R"({"$unset":{"_dibs":""}})");
  CHECK(mongo::regex_literal("a.b*c+[d]é") == "a\\.b\\*c\\+\\[d\\]é");
  const auto p = compact(mongo::to_json(mongo::failure_reasons_pipeline(f, 10).get()));
  INFO(p);
  CHECK(p.find(R"("$group":{"_id":{"$ifNull":["$_dibs.failed.reason",""]},"count":{"$sum":{"$numberInt":"1"}},"first":{"$min":"$_id"},)"
               R"("last":{"$max":"$_id"}})") != std::string::npos);
  CHECK(p.find(R"({"$sort":{"count":{"$numberInt":"-1"},"_id":{"$numberInt":"1"}}})") != std::string::npos);
  CHECK(p.find(R"({"$limit":{"$numberLong":"10"}})") != std::string::npos);
}

TEST_CASE("file mode: a retry record voids the line's failure", "[retry][jsonl]") {
  const std::string header = jsonl::journal_header(10, 20);
  CHECK(jsonl::record_problem("{\"line\":9,\"retry\":true}").empty());
  CHECK(jsonl::retry_record(9) == "{\"line\":9,\"retry\":true}\n");
  const std::string text = header + "\n" + jsonl::done_record(1, "{\"a\":1}") + jsonl::failed_record(2, "HTTP 404", 404, 1) +
                           jsonl::failed_record(3, "timeout", 0, 3) + jsonl::retry_record(2);
  const auto outcomes = jsonl::outcomes_in_journal(text, header, "OUT.journal");
  REQUIRE(outcomes.size() == 2);
  CHECK(outcomes[0].line == 1);
  CHECK(outcomes[0].done);
  CHECK(outcomes[1].line == 3);
  CHECK(outcomes[1].reason == "timeout");
  // A retried line that failed again counts again.
  const auto again = jsonl::outcomes_in_journal(text + jsonl::failed_record(2, "HTTP 500", 500, 1), header, "OUT.journal");
  REQUIRE(again.size() == 3);
  CHECK(again[1].reason == "HTTP 500");
}

TEST_CASE("file mode: a finished OUT becomes a journal without the lines put back", "[retry][jsonl]") {
  const std::string out =
      "{\"ip\":\"1.1.1.1\",\"location\":{\"city\": \"X\",\"n\":1.10}}\n"
      "{\"ip\":\"2.2.2.2\",\"failed\":false,\"_dibs\":{\"failed\":{\"reason\":\"HTTP 404\",\"httpStatus\":404,\"dibs_attempts\":1}}}\n"
      "{\"_dibs\":{\"line\":5,\"input\":\"nope\",\"failed\":{\"reason\":\"line 5 is not a JSON object\",\"httpStatus\":0,\"dibs_attempts\":0}}}\n";
  const auto outcomes = jsonl::outcomes_in_output(out, {1, 3, 5}, "location", "OUT");
  REQUIRE(outcomes.size() == 3);
  CHECK(outcomes[0].done);
  CHECK(outcomes[0].body == "{\"city\":\"X\",\"n\":1.10}");  // numbers kept as written
  CHECK(outcomes[1].line == 3);
  CHECK(outcomes[1].reason == "HTTP 404");
  CHECK(outcomes[2].line == 5);
  CHECK_FALSE(jsonl::reason_selected("HTTP 404", "500"));
  CHECK(jsonl::reason_selected("HTTP 404", "404"));
  CHECK(jsonl::reason_selected("anything", ""));
  CHECK_FALSE(jsonl::reason_selected("HTTP 404 (again)", "", std::string("HTTP 404")));
  CHECK(jsonl::reason_selected("HTTP 404", "", std::string("HTTP 404")));
  const std::string header = jsonl::journal_header(1, 2);
  const auto text = jsonl::journal_text(header, {outcomes[0], outcomes[2]});
  const auto back = jsonl::outcomes_in_journal(text, header, "OUT.journal");
  REQUIRE(back.size() == 2);
  CHECK(back[0].body == outcomes[0].body);
  CHECK(back[1].reason == "line 5 is not a JSON object");
  CHECK_THROWS_WITH(jsonl::outcomes_in_output(out, {1, 3}, "location", "OUT"), Catch::Contains("more lines than the input"));
}

TEST_CASE("failure reasons: most frequent first, with a first and a last example", "[retry][status]") {
  const auto top = jsonl::top_reasons({{"1", "b"}, {"2", "a"}, {"3", "b"}, {"4", "b"}, {"5", "c"}}, 2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].reason == "b");
  CHECK(top[0].count == 3);
  CHECK(top[0].example_ids == std::vector<std::string>{"1", "4"});
  CHECK(top[1].reason == "a");  // ties by reason
  CHECK(top[1].example_ids == std::vector<std::string>{"2"});
}

TEST_CASE("retry's --since: a duration ago or an RFC 3339 time", "[retry][cli]") {
  retry_filter w;
  cli::since_flag("--since", "2h", w);
  CHECK(w.since_ago == std::chrono::milliseconds(7'200'000));
  retry_filter at;
  cli::since_flag("--since", "2026-11-23T18:30:00.5+01:00", at);
  REQUIRE(at.since);
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(at.since->time_since_epoch()).count() ==
        1'795'455'000'500LL);
  CHECK(cli::parse_rfc3339("2026-11-23T17:30:00Z") == cli::parse_rfc3339("2026-11-23 18:30:00+01:00"));
  CHECK_FALSE(cli::parse_rfc3339("2026-11-23T17:30:00"));  // no offset: refused, not guessed
  CHECK_FALSE(cli::parse_rfc3339("2026-13-01T00:00:00Z"));
  retry_filter bad;
  CHECK_THROWS_WITH(cli::since_flag("--since", "yesterday", bad), Catch::Contains("--since: 'yesterday'"));
}

TEST_CASE("status --json is one parseable object with the reasons", "[status][cli]") {
  store_stats s;
  s.pending = 1;
  s.failed = 3;
  failure_reason r{"HTTP 404: \"not found\"\n", 3, {"7", "9"}};
  const auto json = cli::status_json("mysql://127.0.0.1/db table jobs", s, {r});
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(json).get(doc));
  CHECK(uint64_t(doc["failed"]) == 3);
  CHECK(std::string_view(doc["failure_reasons"].at(0)["reason"]) == r.reason);
  CHECK(std::string_view(doc["failure_reasons"].at(0)["example_ids"].at(1)) == "9");
  CHECK(cli::status_counts_line(s) == "status: pending=1 leased_live=0 leased_expired=0 done=0 failed=3");
  // The API's "no data" answers, where the store counts them: apart from done.
  s.done = 10;
  CHECK(cli::status_counts_line(s, 4) == "status: pending=1 leased_live=0 leased_expired=0 done=6 failed=3 no_data=4");
  REQUIRE_FALSE(parser.parse(cli::status_json("x", s, {}, {}, 4)).get(doc));
  CHECK(uint64_t(doc["done"]) == 6);
  CHECK(uint64_t(doc["no_data"]) == 4);
  // The budgets kept in the store: calls as counts, a budget in money in dollars.
  REQUIRE_FALSE(parser.parse(cli::status_json("x", s, {}, {}, std::nullopt,
                                              {{"http://api:80 day 2026-11-29", 40, 100},
                                               {"http://llm:80 USD day 2026-11-29", 473, 500}})).get(doc));
  CHECK(std::string_view(doc["budgets"].at(0)["unit"]) == "calls");
  CHECK(uint64_t(doc["budgets"].at(0)["left"]) == 60);
  CHECK(std::string_view(doc["budgets"].at(1)["unit"]) == "usd");
  CHECK(double(doc["budgets"].at(1)["used"]) == Approx(0.000473));
  CHECK(double(doc["budgets"].at(1)["left"]) == Approx(0.000027));
  CHECK(cli::failure_breakdown({r}) == "failed by reason (top 1):\n  3  HTTP 404: \"not found\"\\n  (e.g. 7, 9)\n");
  CHECK(cli::failure_breakdown({}).empty());
}

TEST_CASE("enrich's end line says whose each count is", "[cli][summary]") {
  cli::end_line_facts f;
  f.store = "jsonl in.jsonl -> out.jsonl";
  f.now.done = 997;
  f.now.failed = 3;
  f.run.completed = 1000;
  f.run.failed = 2;
  CHECK(cli::enrich_end_line(f) ==
        "enrich: jsonl in.jsonl -> out.jsonl: store now: 997 done, 3 failed, 0 pending, 0 leased; this run: 1000 done, "
        "2 failed; claim conflicts 0");
  f.now = {};
  f.deletes_done = true;
  f.claim_conflicts = 745;
  CHECK(cli::enrich_end_line(f) ==
        "enrich: jsonl in.jsonl -> out.jsonl: store now: 0 done (--on-done delete removes finished rows), 0 failed, 0 "
        "pending, 0 leased; this run: 1000 done and deleted, 2 failed; claim conflicts 745 (candidates another shard, "
        "worker or cluster node claimed first: read again, never claimed twice)");
}
