// The MariaDB store against a real server that the ctest fixture starts (or MYSQL_URI), what is
// its own (what every SQL store does: conformance/sql_store.cpp): several processes, a batch's
// fenced writes, sessions idle in a transaction, and clear errors.
#include "support/mysql_env.hpp"
#include "support/process.hpp"
#include "support/run_sync.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
sql::mysql_options options_for(const std::string& table) {
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  o.threads = 2;
  return o;
}

}  // namespace

TEST_CASE("several processes claiming MariaDB rows at once never share one", "[mysql][processes]") {
  const auto table = test::unique_table("procs");
  sql::mysql_store s(options_for(table));
  s.reset_table();
  REQUIRE(s.seed(2000, 5) == 2000);
  std::vector<std::unique_ptr<test::child_process>> children;
  for (int i = 0; i < 4; ++i)
    children.push_back(std::make_unique<test::child_process>(std::vector<std::string>{
        DIBS_CLAIM_PROBE_PATH, test::mysql_uri_for(table), "-", "-", "-", "25", "probe" + std::to_string(i)}));
  std::vector<std::string> all;
  std::vector<std::size_t> per_process;
  for (auto& c : children) {
    std::string out;
    REQUIRE(c->finish(out) == 0);
    std::istringstream lines(out);
    std::size_t n = 0;
    for (std::string id; std::getline(lines, id); ++n) all.push_back(id);
    per_process.push_back(n);
  }
  std::set<std::string> unique(all.begin(), all.end());
  CHECK(all.size() == unique.size());
  CHECK(unique.size() == 2000);
  CHECK(s.stats_blocking().leased_live == 2000);
}

TEST_CASE("with --on-done delete on MariaDB, a batch's fence and delete are one statement that keeps every lost lease", "[mysql]") {
  auto o = options_for(test::unique_table("queue_one"));
  o.done = sql::on_done::remove;
  sql::mysql_store s(o);
  s.reset_table();
  const auto table = o.uri.substr(o.uri.find("table=") + 6);
  s.seed(6, 1);
  auto got = s.claim_blocking({6, "w", 60s, 1s});
  REQUIRE(got.size() == 6);
  s.execute("UPDATE " + table + " SET dibs_lock_until = NOW(6) - INTERVAL 1 SECOND WHERE id = " + got[1].id);  // expired
  s.execute("UPDATE " + table + " SET dibs_lock_by = 'other' WHERE id = " + got[2].id);  // taken over meanwhile
  s.execute("DELETE FROM " + table + " WHERE id = " + got[3].id);                 // gone
  std::vector<completion> done;
  for (auto& j : got) done.push_back(completion{j.ref(), "{}"});
  done[4].ref.token ^= 1;  // a stale token
  const bool mariadb = s.query_value("SELECT VERSION()").value_or("").find("MariaDB") != std::string::npos;
  const auto before = *s.statements_sent();
  auto r = s.complete_blocking(done);
  if (mariadb)
    CHECK(*s.statements_sent() - before == 1);  // no transaction, no separate locking read
  else
    CHECK(*s.statements_sent() - before == 4);  // MySQL has no DELETE ... RETURNING: START, SELECT, DELETE, COMMIT
  CHECK(r.applied == 2);
  CHECK(r.lost == std::vector<std::string>{got[1].id, got[2].id, got[3].id, got[4].id});
  // Only the rows whose lease held are gone; the others are as they were.
  std::vector<std::uint64_t> kept{std::stoull(got[1].id), std::stoull(got[2].id), std::stoull(got[4].id)};
  std::sort(kept.begin(), kept.end());  // claims come in the pick key's order, not the id's
  CHECK(s.query_value("SELECT GROUP_CONCAT(id ORDER BY id) FROM " + table) ==
        std::optional<std::string>(std::to_string(kept[0]) + "," + std::to_string(kept[1]) + "," + std::to_string(kept[2])));
  CHECK(s.query_value("SELECT dibs_lock_by FROM " + table + " WHERE id = " + got[2].id) == std::optional<std::string>("other"));

  SECTION("a batch from two workers goes the locking way and is settled the same") {
    // Fenced by one worker's name alone, b's held lease would come back lost and its row stay.
    s.seed(3, 2);
    auto a = s.claim_blocking({1, "a", 60s, 0s});
    auto b = s.claim_blocking({1, "b", 60s, 0s});
    auto c = s.claim_blocking({1, "c", 60s, 0s});
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    REQUIRE(c.size() == 1);
    auto c_stale = c[0].ref();
    c_stale.token ^= 1;
    auto r2 = s.complete_blocking({completion{a[0].ref(), "{}"}, completion{b[0].ref(), "{}"}, completion{c_stale, "{}"}});
    CHECK(r2.applied == 2);
    CHECK(r2.lost == std::vector<std::string>{c[0].id});
    CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE id IN (" + a[0].id + ", " + b[0].id + ")") ==
          std::optional<std::string>("0"));
    CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE id = " + c[0].id) == std::optional<std::string>("1"));
  }
}

TEST_CASE("a marked batch whose leases all hold is one UPDATE fenced by its WHERE, and one lost lease sends it the locking way", "[mysql]") {
  const auto table = test::unique_table("mark_one");
  sql::mysql_store s(options_for(table));
  s.reset_table();
  s.seed(8, 3);
  auto got = s.claim_blocking({8, "w", 60s, 1s});
  REQUIRE(got.size() == 8);
  std::vector<completion> first, second;
  for (std::size_t i = 0; i < 8; ++i) (i < 4 ? first : second).push_back(completion{got[i].ref(), "{\"n\":" + std::to_string(i) + "}"});

  auto before = *s.statements_sent();
  auto r = s.complete_blocking(first);
  CHECK(*s.statements_sent() - before == 3);  // START, the fenced UPDATE, COMMIT: no locking read
  CHECK(r.applied == 4);
  CHECK(r.lost.empty());
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL AND dibs_lock_by IS NULL") ==
        std::optional<std::string>("4"));

  s.execute("UPDATE " + table + " SET dibs_lock_until = NOW(6) - INTERVAL 1 SECOND WHERE id = " + got[5].id);  // expired
  before = *s.statements_sent();
  r = s.complete_blocking(second);
  // The first try (START, UPDATE, ROLLBACK), then the locking way (START, SELECT ... FOR UPDATE,
  // UPDATE, COMMIT).
  CHECK(*s.statements_sent() - before == 7);
  CHECK(r.applied == 3);
  CHECK(r.lost == std::vector<std::string>{got[5].id});
  CHECK(s.query_value("SELECT location IS NULL FROM " + table + " WHERE id = " + got[5].id) == std::optional<std::string>("1"));
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table + " WHERE location IS NOT NULL") == std::optional<std::string>("7"));
  CHECK(s.query_value("SELECT JSON_EXTRACT(location, '$.n') FROM " + table + " WHERE id = " + got[7].id) ==
        std::optional<std::string>("7"));  // each row its own answer
}

TEST_CASE("MariaDB ends a session left idle inside a transaction, so a vanished worker's row locks don't last", "[mysql]") {
  const auto table = test::unique_table("idle");
  auto o = options_for(table);
  o.idle_transaction_timeout = std::chrono::seconds(2);
  sql::mysql_store holder(o);
  const auto server = holder.query_value("SELECT VERSION()").value_or("");
  if (server.find("MariaDB") == std::string::npos) {
    WARN("not checked: idle_transaction_timeout is MariaDB's, and MYSQL_URI names " << server);
    return;
  }
  CHECK(holder.query_value("SELECT @@SESSION.idle_transaction_timeout") == "2");
  CHECK(sql::mysql_store(options_for(table)).query_value("SELECT @@SESSION.idle_transaction_timeout") == "30");

  // A client that stops in the middle of a transaction: calls run one at a time on the one pooled
  // connection, so the row lock taken here stays held by a session nobody will speak to again.
  holder.reset_table();
  REQUIRE(holder.seed(1, 1) == 1);
  holder.execute("START TRANSACTION");
  holder.execute("SELECT id FROM " + table + " FOR UPDATE");
  sql::mysql_store other(options_for(table));
  const auto free_rows = "SELECT COUNT(*) FROM (SELECT id FROM " + table + " FOR UPDATE SKIP LOCKED) x";
  REQUIRE(other.query_value(free_rows) == "0");  // the row is locked: SKIP LOCKED claims pass it over
  // The server ends that session after 2 s and the row is claimable again (bounded wait on the
  // server's state; without the timeout the lock would last as long as the session).
  bool freed = false;
  for (auto until = std::chrono::steady_clock::now() + 20s; !freed && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(100ms);
    freed = other.query_value(free_rows) == "1";
  }
  CHECK(freed);
}

TEST_CASE("a bad or unreachable MySQL URI fails at start with a clear message", "[mysql]") {
  sql::mysql_options o;
  o.uri = "mysql://root:secret@127.0.0.1:1/db?table=jobs";
  o.connect_timeout = 1s;
  try {
    sql::mysql_store s(o);
    FAIL("connected to a closed port");
  } catch (const std::exception& e) {
    CHECK_THAT(e.what(), Catch::Contains("cannot connect to MySQL/MariaDB at 127.0.0.1:1") && !Catch::Contains("secret"));
  }
  o.uri = "mysql://root:secret@127.0.0.1:3306/db?table=bad-name";
  CHECK_THROWS_WITH(sql::mysql_store(o), Catch::Contains("bad SQL name 'bad-name'"));
  o.uri = "mysql://root:secret@127.0.0.1:3306";
  CHECK_THROWS_WITH(sql::mysql_store(o), Catch::Contains("no database") && !Catch::Contains("secret"));
}

