// A SQL store (MariaDB, PostgreSQL) against its real server: the claim protocol's shared suite
// (support/store_suite.hpp) with SKIP LOCKED claims, --on-done delete as a queue, a row whose
// source is NULL, a row deleted while leased, and connections no child process inherits.
#include "support/backend.hpp"
#include "support/inherited_sockets.hpp"
#include "support/run_sync.hpp"
#include "support/store_suite.hpp"

#include <catch2/catch.hpp>

#include <thread>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::db;

class sql_harness final : public test::store_harness {
 public:
  sql_harness() : main_(db.fresh("suite")) {}
  std::shared_ptr<store> open() override { return db.client(main_.name, false); }
  std::vector<std::string> seed(std::size_t n) override {
    const auto before = std::stoull(main_.query_value("SELECT COALESCE(MAX(id), 0) FROM " + main_.name).value_or("0"));
    REQUIRE(main_.seed(n, 99) == n);
    std::vector<std::string> ids;
    for (std::size_t i = 1; i <= n; ++i) ids.push_back(std::to_string(before + i));
    return ids;
  }
  void let_time_pass(std::chrono::milliseconds d) override { std::this_thread::sleep_for(d); }
  std::optional<std::string> target_of(const std::string& id) override {
    return main_.query_value("SELECT " + db.sql_of().json_as_text("location") + " FROM " + main_.name + " WHERE id = " + id);
  }
  // The user's triggers, as a real table may have them.
  bool refuse_completion_of(const std::string& id) override {
    for (const auto& statement : db.sql_of().refuse_completion(main_.name, id)) main_.execute(statement);
    return true;
  }
  std::shared_ptr<store> open_deleting() override { return db.client(main_.name, true); }

 private:
  test::backend_table main_;
};

std::vector<job> claim(store& s, claim_request r) { return test::run_sync(s.claim(std::move(r))); }
write_result complete(store& s, std::vector<completion> done) { return test::run_sync(s.complete(std::move(done))); }
}  // namespace

BACKEND_TEST_CASE("keeps the claim protocol with SKIP LOCKED claims", "[protocol]") {
  sql_harness h;
  test::run_store_suite(h);
}

BACKEND_TEST_CASE("with --on-done delete, finished rows leave the table like a queue", "[store]") {
  const auto table = db.fresh("queue").name;
  auto s = db.client(table, true);
  REQUIRE(s->seed(5, 1) == 5);
  auto got = claim(*s, {5, "w", 60s, 1s});
  REQUIRE(got.size() == 5);
  std::vector<completion> done;
  for (auto& j : got) done.push_back(completion{j.ref(), "{\"ok\":1}"});
  done[4].ref.token ^= 1;  // a stale one: must stay
  auto r = complete(*s, done);
  CHECK(r.applied == 4);
  REQUIRE(r.lost.size() == 1);
  CHECK(r.lost[0] == got[4].id);
  CHECK(db.dialect().query_value("SELECT COUNT(*) FROM " + table) == std::optional<std::string>("1"));
}

BACKEND_TEST_CASE("a row whose source is NULL reaches the processor as missing, and its failure keeps the reason",
                  "[store]") {
  auto s = db.fresh("odd");
  const auto& table = s.name;
  const auto is_true = std::optional<std::string>(db.sql_of().true_text);
  s.execute("INSERT INTO " + table + " (" + db.sql_of().source_column + ") VALUES (NULL)");
  auto got = claim(*s.store, {1, "w", 60s, 1s});
  REQUIRE(got.size() == 1);
  CHECK(got[0].fields.at(0).st == job_field::state::missing);
  CHECK(got[0].until > store_clock::now() + 30s);  // the server's clock, as epoch microseconds
  auto r = test::run_sync(s.store->fail({failure{got[0].ref(), "source field 'originatingIp' is missing", 0, 1}}));
  CHECK(r.applied == 1);
  CHECK(s.query_value("SELECT dibs_error FROM " + table) == std::optional<std::string>("source field 'originatingIp' is missing"));
  CHECK(s.query_value("SELECT dibs_http_status FROM " + table) == std::optional<std::string>("0"));
  CHECK(s.query_value("SELECT dibs_failed_at IS NOT NULL FROM " + table) == is_true);
  CHECK(s.query_value("SELECT dibs_lock_token IS NULL FROM " + table) == is_true);
  CHECK(s.stats_blocking().failed == 1);
  CHECK(claim(*s.store, {1, "w", 60s, 0s}).empty());
}

BACKEND_TEST_CASE("a row deleted while leased: its result is discarded as a lost lease, and nothing else changes",
                  "[store]") {
  auto s = db.fresh("deleted");
  const auto& table = s.name;
  REQUIRE(s.seed(3, 5) == 3);
  auto got = claim(*s.store, {3, "w", 60s, 1s});
  REQUIRE(got.size() == 3);
  s.execute("DELETE FROM " + table + " WHERE id = " + got[1].id);  // someone removes it meanwhile
  auto r = complete(*s.store, {completion{got[0].ref(), "{\"a\":1}"}, completion{got[1].ref(), "{\"a\":2}"},
                               completion{got[2].ref(), "{\"a\":3}"}});
  CHECK(r.applied == 2);
  CHECK(r.lost == std::vector<std::string>{got[1].id});
  CHECK(s.query_value("SELECT COUNT(*) FROM " + table) == std::optional<std::string>("2"));
  CHECK(s.stats_blocking().done == 2);
  CHECK(s.stats_blocking().drained());
}

BACKEND_TEST_CASE("the store's connections are not inherited by a child process", "[store]") {
  // An inherited connection outlives its close() here: the server would keep that session, and
  // the row locks of its open transaction, for as long as the child lives.
  const auto table = db.fresh("cloexec").name;
  const auto before = test::open_sockets();
  auto s = db.client(table, false);
  REQUIRE(test::run_sync(s->stats()).pending == 0);
  REQUIRE(s->stats_blocking().pending == 0);
  REQUIRE(test::open_sockets().size() > before.size());
  CHECK(test::inheritable_sockets_since(before) == std::vector<std::string>{});
}
