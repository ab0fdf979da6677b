// What the MySQL/MariaDB store decides around a fenced batch and a claim, without a server.
#include <adapters/mysql/claimed_rows.hpp>
#include <adapters/mysql/fenced_rows.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace dibs::mysql;

namespace {
lease_ref ref(std::string id, std::string by, std::uint64_t token) { return lease_ref{std::move(id), std::move(by), token}; }
// The default key: BIGINT UNSIGNED, named by its canonical decimal (quote is never called for it).
fence_plan plan_fence(const std::vector<lease_ref>& refs) {
  return dibs::mysql::plan_fence(refs, row_key{}, [](const std::string& v) { return "'" + v + "'"; });
}
}  // namespace

TEST_CASE("a fenced batch asks once per worker, in batch order, and never about an id that names no row",
          "[mysql][unit]") {
  const std::vector<lease_ref> refs{ref("5", "w-1", 50), ref("nope", "w-1", 1), ref("9", "w-2", 90),
                                    ref("6", "w-1", 60), ref("007", "w-2", 7)};
  const auto plan = plan_fence(refs);
  REQUIRE(plan.row.size() == refs.size());
  CHECK(plan.row[0] == std::optional<std::string>("5"));
  CHECK_FALSE(plan.row[1]);
  CHECK_FALSE(plan.row[4]);
  REQUIRE(plan.queries.size() == 2);
  CHECK(plan.queries[0].by == "w-1");
  REQUIRE(plan.queries[0].rows.size() == 2);
  CHECK((plan.queries[0].rows[0].key == "5" && plan.queries[0].rows[0].token == 50));
  CHECK((plan.queries[0].rows[1].key == "6" && plan.queries[0].rows[1].token == 60));
  CHECK(plan.queries[1].by == "w-2");
  REQUIRE(plan.queries[1].rows.size() == 1);
  CHECK(plan.queries[1].rows[0].key == "9");
  // An id that parses but is not canonical ("007") does not shift the good ones after it out of
  // their query (they would be reported lost without being asked about).
  const auto after_odd = plan_fence({ref("007", "w", 1), ref("3", "w", 3), ref("4", "w", 4)});
  REQUIRE(after_odd.queries.size() == 1);
  REQUIRE(after_odd.queries[0].rows.size() == 2);
  CHECK(after_odd.queries[0].rows[0].key == "3");
  CHECK(after_odd.queries[0].rows[1].key == "4");
}

TEST_CASE("after the fence: the rows the server locked are held, every other item is lost, by its own id",
          "[mysql][unit]") {
  const std::vector<lease_ref> refs{ref("5", "w-1", 50), ref("nope", "w-1", 1), ref("9", "w-2", 90),
                                    ref("6", "w-1", 60)};
  const auto plan = plan_fence(refs);
  const auto out = settle_fence(plan, refs, {"5", "6"});
  CHECK(out.applied == 2);
  REQUIRE(out.held.size() == 4);
  CHECK(out.held[0] == std::optional<std::string>("5"));
  CHECK_FALSE(out.held[1]);
  CHECK_FALSE(out.held[2]);
  CHECK(out.held[3] == std::optional<std::string>("6"));
  CHECK(out.lost == std::vector<std::string>{"nope", "9"});
  // Nothing locked: everything lost; everything locked: nothing lost.
  CHECK(settle_fence(plan, refs, {}).lost.size() == 4);
  const std::vector<lease_ref> good{ref("1", "w", 1), ref("2", "w", 2)};
  CHECK(settle_fence(plan_fence(good), good, {"1", "2"}).lost.empty());
}

TEST_CASE("one fenced write carries a batch of one worker, and its changed-row count proves every lease only for distinct canonical rows",
          "[mysql][unit]") {
  const auto one = plan_fence({ref("1", "w", 1), ref("2", "w", 2)});
  REQUIRE(single_fence(one, true) != nullptr);
  CHECK(single_fence(one, true)->by == "w");
  CHECK(single_fence(one, true)->rows.size() == 2);
  CHECK(single_fence(plan_fence({ref("1", "a", 1), ref("2", "b", 2)}), false) == nullptr);  // two workers
  // DELETE ... RETURNING names its rows itself: an odd id or a repeat is settled from them.
  const auto odd = plan_fence({ref("1", "w", 1), ref("007", "w", 7)});
  CHECK(single_fence(odd, false) != nullptr);
  CHECK(single_fence(odd, true) == nullptr);  // a count of changed rows can't tell which one
  const auto twice = plan_fence({ref("1", "w", 1), ref("1", "w", 1)});
  CHECK(single_fence(twice, false) != nullptr);
  CHECK(single_fence(twice, true) == nullptr);
  CHECK(single_fence(plan_fence({}), false) == nullptr);
}

TEST_CASE("answers the server can't hold are refused before any statement, and a deleting store refuses none",
          "[mysql][unit]") {
  const server_limits maria{31, 16u << 20};
  const std::string deep = std::string(32, '[') + std::string(32, ']');
  const std::vector<completion> batch{{ref("1", "w", 1), "{}"}, {ref("2", "w", 2), deep}, {ref("3", "w", 3), "{\"a\":1}"}};
  const auto kept = split_storable(batch, true, maria);
  REQUIRE(kept.storable.size() == 2);
  CHECK(kept.storable[0].ref.id == "1");
  CHECK(kept.storable[1].ref.id == "3");
  REQUIRE(kept.refused.size() == 1);
  CHECK(kept.refused[0].first == "2");
  CHECK_THAT(kept.refused[0].second, Catch::Contains("nested 32 levels deep"));
  // Over half the packet once escaped (2 x size + 2 > 1000): refused as too large.
  const server_limits small{31, 1000};
  const auto big = split_storable({{ref("4", "w", 4), "\"" + std::string(500, 'x') + "\""}}, true, small);
  CHECK(big.storable.empty());
  CHECK_THAT(big.refused.at(0).second, Catch::Contains("max_allowed_packet"));
  const auto deleting = split_storable(batch, false, maria);
  CHECK(deleting.storable.size() == 3);
  CHECK(deleting.refused.empty());
}

TEST_CASE("completions are split into UPDATEs under half of max_allowed_packet", "[mysql][unit]") {
  CHECK(statement_runs({}, 1000).empty());
  CHECK(statement_runs({10, 10, 10}, 1000) == std::vector<std::size_t>{3});
  // Each answer counts its size + 32; a statement closes before it would pass 500.
  CHECK(statement_runs({200, 200, 200}, 1000) == std::vector<std::size_t>{2, 1});
  CHECK(statement_runs({468, 1}, 1000) == std::vector<std::size_t>{1, 1});
  CHECK(statement_runs({467, 1}, 1000) == std::vector<std::size_t>{2});
  // An answer larger than the half goes alone, never dropped.
  CHECK(statement_runs({10, 900, 10}, 1000) == std::vector<std::size_t>{1, 1, 1});
}

TEST_CASE("held releases share one statement per delay and reason, and lost ones are not released", "[mysql][unit]") {
  const std::vector<release_item> batch{{ref("1", "w", 1), millis(0), ""},
                                        {ref("2", "w", 2), millis(500), "HTTP 503"},
                                        {ref("3", "w", 3), millis(0), ""},
                                        {ref("4", "w", 4), millis(500), "HTTP 503"},
                                        {ref("5", "w", 5), millis(500), "timeout"}};
  const std::vector<lease_ref> refs{batch[0].ref, batch[1].ref, batch[2].ref, batch[3].ref, batch[4].ref};
  const auto fence = settle_fence(plan_fence(refs), refs, {"1", "2", "3", "5"});
  const auto groups = release_groups(batch, fence);
  REQUIRE(groups.size() == 3);
  CHECK(groups.at({0, ""}) == std::vector<std::string>{"1", "3"});
  CHECK(groups.at({500000, "HTTP 503"}) == std::vector<std::string>{"2"});
  CHECK(groups.at({500000, "timeout"}) == std::vector<std::string>{"5"});
}

TEST_CASE("a claimed row becomes a job: server time in UTC, a NULL source a missing field", "[mysql][unit]") {
  const auto j = claimed_job({"42", "1.2.3.4", "3", "2026-11-22 03:04:05.123"}, "host-1-0", 77, "originatingIp");
  CHECK(j.id == "42");
  CHECK(j.by == "host-1-0");
  CHECK(j.token == 77);
  CHECK(j.attempts == 3);
  REQUIRE(j.fields.size() == 1);
  CHECK(j.fields[0].name == "originatingIp");
  CHECK(j.fields[0].st == job_field::state::string);
  CHECK(j.fields[0].value == "1.2.3.4");
  // 2026-11-22T03:04:05Z is 1795316645 s after the epoch; ".123" is 123,000 microseconds.
  CHECK(std::chrono::duration_cast<std::chrono::microseconds>(j.until.time_since_epoch()).count() ==
        1795316645LL * 1000000 + 123000);
  const auto null_source = claimed_job({"43", std::nullopt, "1", std::nullopt}, "w", 1, "ip");
  CHECK(null_source.fields[0].st == job_field::state::missing);
  CHECK(null_source.until == store_time{});
  CHECK(parse_datetime("not a time") == store_time{});
}

TEST_CASE("the pre-flight's sampled row: the column there or not, its value NULL or text", "[sql][preflight]") {
  const std::vector<std::string> columns{"id", "originatingIp", "location"};
  CHECK(has_column(columns, "originatingip"));  // MySQL compares column names without case
  CHECK_FALSE(has_column(columns, "ip"));
  auto s = sampled_row({std::string("7"), std::string("8.8.8.8")}, "originatingIp", true, columns);
  CHECK(s.id == "7");
  CHECK(s.source.name == "originatingIp");
  CHECK(s.source.st == dibs::job_field::state::string);
  CHECK(s.source.value == "8.8.8.8");
  CHECK(s.fields == columns);
  CHECK(sampled_row({std::string("7"), std::nullopt}, "originatingIp", true, columns).source.st ==
        dibs::job_field::state::missing);
  CHECK(sampled_row({std::string("7")}, "ip", false, columns).source.st == dibs::job_field::state::missing);
}
