// One bad item costs that item, never the run, on a real PostgreSQL: answers the server refuses
// (a CHECK constraint of the user's, a trigger's RAISE, JSON jsonb can't hold, a failure reason
// too long for the user's error column) are failed with the server's reason, and every other
// row of the same batches lands.
#include "postgres/pg_env.hpp"

#include <adapters/postgres/pg_store.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
class scripted_processor final : public processor {
 public:
  awaitable<outcome> process(job j) override {
    const std::string src = j.fields.at(0).value;
    if (src.rfind("policy-", 0) == 0) co_return outcome::done(R"({"refuse":true,"query":")" + src + "\"}");
    if (src.rfind("trigger-", 0) == 0) co_return outcome::done(R"({"trigger":true,"query":")" + src + "\"}");
    if (src.rfind("nul-", 0) == 0) co_return outcome::done(R"({"text":"a\u0000b","query":")" + src + "\"}");
    if (src.rfind("longfail-", 0) == 0) co_return outcome::fail("the API has no data: " + std::string(70'000, 'm'));
    co_return outcome::done(R"({"status":"success","query":")" + src + "\"}");
  }
};
}  // namespace

TEST_CASE("answers PostgreSQL refuses fail alone, with the server's reason, and the run ends", "[postgres][poison]") {
  const auto table = test::unique_pg_table("poison");
  pg::pg_options o;
  o.uri = test::postgres_uri_for(table);
  auto s = std::make_shared<pg::pg_store>(o);
  s->reset_table();
  // The user's own table, as it may be: a shorter error column, a CHECK and a trigger with a policy.
  s->execute("ALTER TABLE " + table + " ALTER COLUMN error TYPE VARCHAR(300)");
  s->execute("ALTER TABLE " + table + " ADD CONSTRAINT " + table + "_policy CHECK (NOT (location ? 'refuse'))");
  s->execute("CREATE FUNCTION " + table + "_guard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.location ? 'trigger' "
             "THEN RAISE EXCEPTION 'refused by the trigger'; END IF; RETURN NEW; END $$");
  s->execute("CREATE TRIGGER " + table + "_guard BEFORE UPDATE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " + table +
             "_guard()");
  std::string values;
  int poison = 0;
  for (int i = 0; i < 300; ++i) {
    std::string src = "ok-" + std::to_string(i);
    if (i == 42 || i == 201) src = "policy-" + std::to_string(i), ++poison;
    if (i == 77) src = "trigger-" + std::to_string(i), ++poison;
    if (i == 130) src = "nul-" + std::to_string(i), ++poison;
    if (i == 99 || i == 260) src = "longfail-" + std::to_string(i), ++poison;
    values += (i ? ",('" : "('") + src + "')";
  }
  s->execute("INSERT INTO " + table + " (\"originatingIp\") VALUES " + values);

  engine_config cfg;
  cfg.shards = 1;
  cfg.concurrency = 60;
  cfg.claim_batch = 50;
  cfg.lease = 30s;
  engine e(cfg, s, [](const shard_info&) { return std::make_unique<scripted_processor>(); });
  std::promise<void> ended;
  e.on_finished([&] { ended.set_value(); });
  e.start();
  const bool ended_by_itself = ended.get_future().wait_for(120s) == std::future_status::ready;
  if (!ended_by_itself) e.stop_now();
  e.wait();
  REQUIRE(ended_by_itself);

  const auto st = s->stats_blocking();
  CHECK(st.done == static_cast<std::uint64_t>(300 - poison));
  CHECK(st.failed == static_cast<std::uint64_t>(poison));
  CHECK(st.drained());
  CHECK(e.summary().completed == static_cast<std::uint64_t>(300 - poison));
  CHECK(e.summary().failed == static_cast<std::uint64_t>(poison));
  auto q = [&](const std::string& sql) { return s->query_value(sql).value_or("NULL"); };
  CHECK(q("SELECT count(*) FROM " + table + " WHERE \"originatingIp\" LIKE 'ok-%' AND location->>'query' = \"originatingIp\"") ==
        std::to_string(300 - poison));
  CHECK(q("SELECT error FROM " + table + " WHERE \"originatingIp\" = 'policy-42'") ==
        "the store refused the answer: new row for relation \"" + table + "\" violates check constraint \"" + table +
            "_policy\" (SQLSTATE 23514)");
  CHECK(q("SELECT error FROM " + table + " WHERE \"originatingIp\" = 'trigger-77'") ==
        "the store refused the answer: refused by the trigger (SQLSTATE P0001)");
  CHECK_THAT(q("SELECT error FROM " + table + " WHERE \"originatingIp\" = 'nul-130'"),
             Catch::StartsWith("the store refused the answer: unsupported Unicode escape sequence (SQLSTATE 22P05)"));
  // 70 KB of reason: bounded by the engine (1,000 bytes), refused by the 300-byte column, recorded shortened.
  const auto longfail = q("SELECT error FROM " + table + " WHERE \"originatingIp\" = 'longfail-99'");
  CHECK_THAT(longfail, Catch::StartsWith("the API has no data: mmmm"));
  CHECK(longfail.size() <= 300);
  CHECK(q("SELECT count(*) FROM " + table + " WHERE failed_at IS NOT NULL AND attempts = 1") == std::to_string(poison));
  CHECK(q("SELECT count(*) FROM " + table + " WHERE lock_token IS NOT NULL") == "0");
}
