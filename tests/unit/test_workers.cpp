// Workers you can name and release, and the live changes: the worker id's rules, which leases
// are a worker's, the operator's release (and its fence) on the memory store, the controls'
// request bodies and answers, `dibs status`'s lease table, the SQL and MongoDB filters, and the
// rate limiter's new rate.
#include "support/memory_admin.hpp"
#include "support/process.hpp"
#include "support/worker_release.hpp"
#include "support/run_dibs.hpp"

#include "apps/dibs/status_report.hpp"
#include "adapters/control/control_json.hpp"
#include <dibs/http/rate_limiter.hpp>
#include <adapters/mongo/worker_leases.hpp>
#include <adapters/mysql/mysql_workers.hpp>
#include <adapters/postgres/pg_workers.hpp>

#include "engine/src/worker_id.hpp"

#include <catch2/catch.hpp>

#include <simdjson.h>

using namespace dibs;

TEST_CASE("a worker id is 1 to 64 printable ASCII characters, and owns NAME and NAME-<digits>", "[workers]") {
  CHECK(worker_id_problem("enrich-7d9f5c-x2kq").empty());
  CHECK(worker_id_problem("web_1.example.com").empty());
  CHECK(worker_id_problem(std::string(64, 'a')).empty());
  CHECK_THAT(worker_id_problem(std::string(65, 'a')), Catch::Contains("at most 64 characters (it has 65)"));
  CHECK_THAT(worker_id_problem(""), Catch::Contains("must not be empty"));
  CHECK_THAT(worker_id_problem("web 1"), Catch::Contains("printable ASCII without spaces"));
  CHECK_THAT(worker_id_problem("web\n1"), Catch::Contains("printable ASCII"));
  CHECK_THAT(worker_id_problem("h\xc3\xa9te"), Catch::Contains("printable ASCII"));

  CHECK(worker_owns("web-1", "web-1"));
  CHECK(worker_owns("web-1-0", "web-1"));
  CHECK(worker_owns("web-1-15", "web-1"));
  CHECK_FALSE(worker_owns("web-12-0", "web-1"));
  CHECK_FALSE(worker_owns("web-1-x-0", "web-1"));
  CHECK_FALSE(worker_owns("web-1-", "web-1"));
  CHECK_FALSE(worker_owns("WEB-1-0", "web-1"));
  CHECK_FALSE(worker_owns("web-1-0", ""));
  CHECK(worker_owns("web-1-0", "web-1-0"));  // one shard, by its full id
}

TEST_CASE("the memory store lists lease holders and releases a worker's leases, fenced", "[workers][memory]") {
  test::memory_admin s;
  s.seed(10, 3);
  test::check_worker_release(s);
}

TEST_CASE("the memory store's lease holders say which leases expired and how long ago", "[workers][memory]") {
  store_time now = store_clock::now();
  memory_store::options o;
  o.now = [&now] { return now; };
  memory_store s(o);
  s.seed_random_ips(3, 1);
  using namespace std::chrono_literals;
  REQUIRE(s.claim_now({1, "old-0", 10s, 0s}).size() == 1);
  now += 5s;
  REQUIRE(s.claim_now({2, "old-0", 10s, 0s}).size() == 2);
  now += 7s;  // the first lease expired 2 s ago, the others end in 3 s
  const auto hs = s.lease_holders_now();
  REQUIRE(hs.size() == 1);
  CHECK(hs[0].leased == 3);
  CHECK(hs[0].expired == 1);
  CHECK(hs[0].earliest_until_s == Approx(-2.0));
  CHECK(hs[0].latest_until_s == Approx(3.0));
  CHECK(http::renewed_s_ago(hs[0], 10s) == Approx(7.0));  // since the latest was taken, with a 10 s lease
  CHECK(s.release_worker_now("old") == 3);
  CHECK(s.stats_now().pending == 3);
}

// Issue 29: a live worker retrying 429s showed "oldest lease 84 s" on a 60 s lease, and /workers
// said its leases were expired: the items it had given back for a retry keep its name, with the
// retry time as their until, and once that time passed (the worker, throttled, had not claimed
// them again yet) they read as a dead worker's expired leases.
TEST_CASE("GET /workers never shows a live worker's leases as expired: items given back for a retry that is due are "
          "retry due, and a worker that renews is live",
          "[workers][controls][memory]") {
  using namespace std::chrono_literals;
  store_time now = store_clock::now();
  memory_store::options o;
  o.now = [&now] { return now; };
  memory_store s(o);
  s.seed_random_ips(6, 1);
  auto held = s.claim_now({3, "live-0", 60s, 1s});
  REQUIRE(held.size() == 3);
  const auto dead = s.claim_now({2, "dead-0", 60s, 1s});
  REQUIRE(dead.size() == 2);
  // A 429: the first item goes back for a retry in 20 s, under live-0's name.
  REQUIRE(s.release_now({release_item{held[0].ref(), 20s, "HTTP 429", 429}}).applied == 1);
  // 84 s on: live-0 renewed what it holds every 30 s; dead-0 never did; the retry has been due 64 s.
  for (int i = 0; i < 3; ++i) {
    now += 28s;
    REQUIRE(s.renew_now({renewal{held[1].ref()}, renewal{held[2].ref()}}, 60s).applied == 2);
  }
  const auto holders = s.lease_holders_now();
  REQUIRE(holders.size() == 2);
  const auto json = http::workers_json("other-host", 60s, {}, true, holders, "");
  simdjson::dom::parser p;
  simdjson::dom::element doc, live, gone;
  REQUIRE_FALSE(p.parse(json).get(doc));
  for (auto h : simdjson::dom::array(doc["store"])) (std::string_view(h["by"]) == "live-0" ? live : gone) = h;
  CHECK(std::string_view(live["state"]) == "live");
  CHECK(uint64_t(live["leased"]) == 3);
  CHECK(uint64_t(live["expired"]) == 0);
  CHECK(uint64_t(live["retry_due"]) == 1);
  CHECK(double(live["renewed_s_ago"]) == Approx(0));  // renewed just now
  CHECK(double(live["renewed_s_ago"]) < 60);
  CHECK(std::string_view(gone["by"]) == "dead-0");
  CHECK(std::string_view(gone["state"]) == "stale");
  CHECK(uint64_t(gone["expired"]) == 2);
  CHECK(uint64_t(gone["retry_due"]) == 0);
  CHECK(double(gone["renewed_s_ago"]) == Approx(84));

  // This process's own shard is live whatever the store says (it is the one answering).
  const auto mine = http::read_holder(lease_holder{"web-1-0", 2, 2, -5, -5}, true);
  CHECK(mine.live);
  CHECK(mine.expired == 0);
  CHECK(mine.retry_due == 2);
  const auto other = http::read_holder(lease_holder{"web-2-0", 2, 2, -5, -5}, false);
  CHECK_FALSE(other.live);
  CHECK(other.expired == 2);
}

TEST_CASE("the controls' request bodies are checked, naming the field", "[workers][controls]") {
  using namespace http;
  CHECK(release_body(R"({"worker":"web-1"})").value == std::optional<std::string>("web-1"));
  CHECK_THAT(release_body(R"({"worker":""})").error, Catch::Contains("\"worker\" must not be empty"));
  CHECK_THAT(release_body(R"({"worker":5})").error, Catch::Contains("\"worker\" must be a worker id"));
  CHECK_THAT(release_body("worker=web-1").error, Catch::Contains("a JSON object"));
  CHECK_THAT(release_body("[1]").error, Catch::Contains("a JSON object"));

  CHECK(concurrency_body(R"({"concurrency":50})").value == std::optional<std::size_t>(50));
  CHECK_THAT(concurrency_body(R"({"concurrency":0})").error, Catch::Contains("from 1 to 1000000"));
  CHECK_THAT(concurrency_body(R"({"concurrency":-3})").error, Catch::Contains("\"concurrency\""));
  CHECK_THAT(concurrency_body(R"({"concurrency":"5"})").error, Catch::Contains("\"concurrency\""));
  CHECK_THAT(concurrency_body(R"({"concurrency":2.5})").error, Catch::Contains("\"concurrency\""));

  CHECK(*rate_body(R"({"rate":"45/min"})").value == Approx(0.75));
  CHECK(*rate_body(R"({"rate":"10/s"})").value == Approx(10));
  CHECK(*rate_body(R"({"rate":2.5})").value == Approx(2.5));
  CHECK(rate_body(R"({"rate":null})").value == std::optional<double>(0));
  CHECK_THAT(rate_body(R"({"rate":"fast"})").error, Catch::Contains("N/s, N/min or N/h"));
  CHECK_THAT(rate_body(R"({"rate":-1})").error, Catch::Contains("\"rate\""));
  CHECK_THAT(rate_body(R"({})").error, Catch::Contains("\"rate\" is missing"));

  // "reason" a part of the reason (as dibs retry --reason); "reason_is" the whole reason, the
  // group /status counted (the dashboard's "Retry these"); {} every failure.
  const auto part = retry_body(R"({"reason":"timed"})").value;
  REQUIRE(part);
  CHECK_FALSE(part->reason_is);
  CHECK(part->reason_contains == "timed");
  const auto exact = retry_body(R"({"reason_is":"timed out"})").value;
  REQUIRE(exact);
  CHECK(exact->reason_is == std::optional<std::string>("timed out"));
  CHECK(exact->reason_contains.empty());
  const auto none = retry_body(R"({"reason_is":""})").value;
  REQUIRE(none);
  CHECK(none->reason_is == std::optional<std::string>(""));  // the group without one
  for (const char* all : {R"({"reason":""})", "{}", "", R"({"reason":null})"}) {
    INFO(all);
    const auto every = retry_body(all).value;
    REQUIRE(every);
    CHECK(every->selects_all());
  }
  CHECK_THAT(retry_body(R"({"reason_is":[1]})").error, Catch::Contains("\"reason_is\""));
  CHECK_THAT(retry_body(R"({"reason":3})").error, Catch::Contains("\"reason\""));
}

TEST_CASE("control bodies with a key twice are refused (400), whichever copy a reader would take", "[workers][controls]") {
  using namespace http;
  CHECK_THAT(concurrency_body(R"({"concurrency":2,"concurrency":1000000})").error, Catch::Contains("twice"));
  CHECK_FALSE(concurrency_body(R"({"concurrency":2,"concurrency":1000000})").value);
  CHECK_FALSE(release_body(R"({"worker":"web-1","worker":"web-2"})").value);
  CHECK_FALSE(rate_body(R"({"rate":"1/s","rate":null})").value);
  CHECK_FALSE(retry_body(R"({"reason":"a","x":{"k":1,"k":2}})").value);
  CHECK(concurrency_body(R"({"concurrency":2})").value == std::optional<std::size_t>(2));
}

TEST_CASE("GET /workers is one object: this process's shards and the store's lease holders", "[workers][controls]") {
  using namespace std::chrono_literals;
  shard_view a{"web-1-0", 3, 5, 10, "closed", ""};
  shard_view b{"web-1-1", 0, 1, 10, "open", "connection refused"};
  lease_holder mine{"web-1-0", 5, 0, 42.5, 50};
  lease_holder dead{"db-9-0", 7, 7, -30, -20};
  const auto json = http::workers_json("web-1", 60s, {a, b}, true, std::vector<lease_holder>{mine, dead}, "");
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE_FALSE(p.parse(json).get(doc));
  CHECK(std::string_view(doc["worker_id"]) == "web-1");
  CHECK(double(doc["lease_s"]) == 60);
  CHECK(std::string_view(doc["this_process"].at(1)["by"]) == "web-1-1");
  CHECK(uint64_t(doc["this_process"].at(0)["in_flight"]) == 3);
  CHECK(std::string_view(doc["this_process"].at(1)["breaker"]) == "open");
  CHECK(bool(doc["store_available"]));
  CHECK(std::string_view(doc["store"].at(1)["by"]) == "db-9-0");
  CHECK(uint64_t(doc["store"].at(1)["leased"]) == 7);
  CHECK(double(doc["store"].at(1)["renewed_s_ago"]) == Approx(80));  // 60 s lease, its latest 20 s past it
  CHECK(std::string_view(doc["store"].at(1)["state"]) == "stale");
  CHECK(uint64_t(doc["store"].at(1)["expired"]) == 7);
  CHECK(double(doc["store"].at(0)["renewed_s_ago"]) == Approx(10));
  CHECK(std::string_view(doc["store"].at(0)["state"]) == "live");
  CHECK(bool(doc["store"].at(0)["this_process"]));
  CHECK_FALSE(bool(doc["store"].at(1)["this_process"]));

  const auto none = http::workers_json("web-1", 60s, {}, false, std::nullopt, "");
  REQUIRE_FALSE(p.parse(none).get(doc));
  CHECK_FALSE(bool(doc["store_available"]));
  CHECK(simdjson::dom::array(doc["store"]).size() == 0);
  const auto failed = http::workers_json("web-1", 60s, {}, true, std::nullopt, "connection refused");
  REQUIRE_FALSE(p.parse(failed).get(doc));
  CHECK(std::string_view(doc["store_error"]) == "connection refused");

  auto sum = http::summarize_breakers({a, b});
  CHECK(sum.state == "open");
  CHECK(sum.reason == "connection refused");
  b.breaker = "closed";
  sum = http::summarize_breakers({a, b});
  CHECK(sum.state == "closed");
  CHECK(sum.reason == "connection refused");  // the last one seen, though closed now
  CHECK(http::with_members("{\"a\":1}", ",\"b\":2") == "{\"a\":1,\"b\":2}");
  CHECK(http::json_number(0.75) == "0.75");
  CHECK(http::json_number(1.0 / 0.0) == "null");
}

TEST_CASE("dibs status prints the lease holders, and --json has them", "[workers][status][cli]") {
  lease_holder live{"web-1-0", 12, 0, 41.25, 59};
  lease_holder dead{"db-9-0", 3, 3, -93.5, -90};
  CHECK(cli::lease_table({live, dead}) ==
        "leases by worker:\n  web-1-0  12 leased  (earliest until in 41.2s)\n"
        "  db-9-0  3 leased, 3 expired  (earliest expired 93.5s ago)\n");
  CHECK(cli::lease_table({}).empty());
  // A live worker (its latest until ahead) whose retry came due: not "expired".
  CHECK(cli::lease_table({lease_holder{"web-1-0", 4, 1, -3, 55}}) ==
        "leases by worker:\n  web-1-0  4 leased, 1 retry due  (a retry due for 3.0s; leases renewed)\n");
  store_stats s;
  s.leased_live = 12;
  s.leased_expired = 3;
  const auto json = cli::status_json("memory", s, {}, {live, dead});
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE_FALSE(p.parse(json).get(doc));
  CHECK(std::string_view(doc["lease_holders"].at(1)["by"]) == "db-9-0");
  CHECK(uint64_t(doc["lease_holders"].at(1)["expired"]) == 3);
  CHECK(double(doc["lease_holders"].at(1)["earliest_until_s"]) == Approx(-93.5));
  CHECK(double(doc["lease_holders"].at(1)["latest_until_s"]) == Approx(-90));
  CHECK_FALSE(bool(doc["lease_holders"].at(1)["renewing"]));
  CHECK(bool(doc["lease_holders"].at(0)["renewing"]));
  REQUIRE_FALSE(p.parse(cli::status_json("memory", s, {})).get(doc));
  CHECK(simdjson::dom::array(doc["lease_holders"]).size() == 0);
}

TEST_CASE("dibs status counts a live worker's retries due apart from expired leases", "[workers][status][cli]") {
  // A live worker (renewing) gave 2 items back for a retry whose time has come; a dead one left 3.
  lease_holder live{"web-1-0", 10, 2, -1.5, 55};
  lease_holder dead{"db-9-0", 3, 3, -93.5, -90};
  store_stats s;
  s.pending = 4;
  s.leased_live = 8;
  s.leased_expired = 5;
  CHECK(cli::retries_due({live, dead}) == 2);
  CHECK(cli::status_counts_line(s, std::nullopt, cli::retries_due({live, dead})) ==
        "status: pending=4 leased_live=8 leased_expired=3 done=0 failed=0 retry_due=2");
  CHECK(cli::status_counts_line(s) == "status: pending=4 leased_live=8 leased_expired=5 done=0 failed=0");
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE_FALSE(p.parse(cli::status_json("memory", s, {}, {live, dead})).get(doc));
  CHECK(uint64_t(doc["leased_expired"]) == 3);
  CHECK(uint64_t(doc["retry_due"]) == 2);
}

TEST_CASE("the stores' release statements match NAME and NAME-<digits> exactly", "[workers][sql][mongo]") {
  mysql::table_names n;
  const auto my = mysql::release_worker(n, "'web-1'", "'web-1-'", 6);
  CHECK_THAT(my, Catch::Contains("SET `dibs_lock_by` = NULL, `dibs_lock_token` = NULL, `dibs_lock_until` = NULL WHERE `dibs_open` = 1 "
                                 "AND `dibs_lock_token` IS NOT NULL"));
  CHECK_THAT(my, Catch::Contains("BINARY `dibs_lock_by` = BINARY 'web-1'"));
  CHECK_THAT(my, Catch::Contains("BINARY LEFT(`dibs_lock_by`, 6) = BINARY 'web-1-'"));
  CHECK_THAT(my, Catch::Contains("SUBSTRING(`dibs_lock_by`, 6 + 1) REGEXP '^[0-9]+$'"));
  CHECK_THAT(my, !Catch::Contains("attempts"));  // the claim's attempt stays counted
  CHECK_THAT(mysql::lease_holders(n), Catch::Contains("GROUP BY COALESCE(`dibs_lock_by`, '')"));

  pg::table_names pn;
  const auto pgs = pg::release_worker(pn, "web-1");
  REQUIRE(pgs.params.size() == 2);
  CHECK(pgs.params[0] == std::optional<std::string>("web-1"));
  CHECK(pgs.params[1] == std::optional<std::string>("web-1-"));
  CHECK_THAT(pgs.sql, Catch::Contains("substr(\"dibs_lock_by\", length($2::text) + 1) ~ '^[0-9]+$'"));
  CHECK_THAT(pgs.sql, !Catch::Contains("attempts"));

  CHECK(mongo::worker_by_regex("web.1") == "^web\\.1(-[0-9]+)?$");
  CHECK(mongo::worker_by_regex("a+b") == "^a\\+b(-[0-9]+)?$");
}

TEST_CASE("a rate limiter takes a new rate at once, for every caller", "[workers][rate]") {
  using namespace std::chrono_literals;
  http::rate_limiter l(10, 1);
  const auto g0 = l.generation();
  auto s1 = l.take("h");
  auto s2 = l.take("h");
  CHECK(s2.at() - s1.at() == std::chrono::duration_cast<http::rate_limiter::clock::duration>(100ms));
  l.set_per_second(1);
  CHECK(l.per_second() == 1);
  CHECK(l.generation() != g0);
  CHECK(s2.generation() != l.generation());  // stale: its holder takes a new slot
  auto s3 = l.take("h");
  auto s4 = l.take("h");
  CHECK(s4.at() - s3.at() == std::chrono::duration_cast<http::rate_limiter::clock::duration>(1s));
  CHECK(s3.at() <= http::rate_limiter::clock::now());  // the old schedule's queue is gone
  l.set_per_second(0);
  CHECK(l.per_second() == 0);
  const auto before = http::rate_limiter::clock::now();
  const auto at = l.reserve("h");
  const auto after = http::rate_limiter::clock::now();
  CHECK(at >= before);  // no schedule: at once
  CHECK(at <= after);
}

TEST_CASE("dibs release refuses a bad worker id, a file store, and a missing --yes off a terminal", "[workers][cli]") {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), "release");
    return test::run_dibs(args, test::stdin_from::dev_null);  // never this test's terminal
  };
  auto [rc, out] = run({"--store", "jsonl:in.jsonl", "--worker", "web 1", "--yes"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("dibs: error: --worker 'web 1' must be printable ASCII without spaces"));
  std::tie(rc, out) = run({"--store", "jsonl:in.jsonl", "--worker", "web-1", "--yes"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("a file's leases live only in the process that runs it"));
  std::tie(rc, out) = run({"--store", "postgresql://nobody@127.0.0.1:1/none?table=jobs", "--worker", "web-1"});
  CHECK(rc == 2);  // asked off a terminal: refused before the store is even opened
  CHECK_THAT(out, Catch::Contains("stdin is not a terminal: add --yes"));
  std::tie(rc, out) = run({"--store", "jsonl:in.jsonl"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--worker is required"));
}

TEST_CASE("a run that starts behind another worker's live leases says why it may stand still, and how to free them",
          "[workers][cli][first-minutes]") {
  lease_holder killed{"pod-a-1", 40, 0, 52.5};  // a run killed with -9 a few seconds ago
  lease_holder dead{"db-9-0", 3, 3, -93.5};     // expired: claimed again at once, nothing to wait for
  CHECK(cli::lease_wait_note({dead, killed}) ==
        "40 item(s) are leased by other workers (pod-a-1 40), the first lease ending in 52.5s: this run takes them when "
        "their leases end, and until then may show no progress for them. A worker that was killed keeps its leases "
        "that long; if it is gone, `dibs release --worker pod-a-1` with this --store frees them now");
  CHECK(cli::lease_wait_note({dead}).empty());
  CHECK(cli::lease_wait_note({}).empty());
}
