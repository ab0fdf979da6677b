// One bad item costs that item, never the run, on a real MariaDB: answers the server refuses
// (JSON nested too deep for its JSON check, a row a user's trigger refuses, a failure reason too
// long for the user's error column) are failed with the server's reason, and every other row of
// the same batches lands. Before the engine split refused batches, one such answer blocked its
// shard forever: the batch was retried without end while its leases were renewed.
#include "support/mysql_env.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
std::string nested_json(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

// The answers by the row's source: poison for some, a plain object for the rest.
class scripted_processor final : public processor {
 public:
  awaitable<outcome> process(job j) override {
    const std::string src = j.fields.at(0).value;
    if (src.rfind("deep-", 0) == 0) co_return outcome::done("{\"a\":" + nested_json(33) + "}");
    if (src.rfind("policy-", 0) == 0) co_return outcome::done(R"({"refuse":true,"query":")" + src + "\"}");
    if (src.rfind("longfail-", 0) == 0) co_return outcome::fail("the API has no data: " + std::string(70'000, 'm'));
    co_return outcome::done(R"({"status":"success","query":")" + src + "\"}");
  }
};
}  // namespace

TEST_CASE("answers MariaDB refuses fail alone, with the server's reason, and the run ends", "[mysql][poison]") {
  const auto table = test::unique_table("poison");
  sql::mysql_options o;
  o.uri = test::mysql_uri_for(table);
  auto s = std::make_shared<sql::mysql_store>(o);
  s->reset_table();
  // The user's own table, as it may be: a shorter error column and a trigger with a policy.
  s->execute("ALTER TABLE " + table + " MODIFY `error` VARCHAR(300) NULL");
  s->execute("CREATE TRIGGER " + table + "_policy BEFORE UPDATE ON " + table +
             " FOR EACH ROW BEGIN IF NEW.location LIKE '%\"refuse\": true%' OR NEW.location LIKE '%\"refuse\":true%' THEN "
             "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by policy'; END IF; END");
  std::string values;
  int poison = 0;
  for (int i = 0; i < 300; ++i) {
    std::string src = "ok-" + std::to_string(i);
    if (i == 17 || i == 150) src = "deep-" + std::to_string(i), ++poison;
    if (i == 42) src = "policy-" + std::to_string(i), ++poison;
    if (i == 99 || i == 260) src = "longfail-" + std::to_string(i), ++poison;
    values += (i ? ",('" : "('") + src + "')";
  }
  s->execute("INSERT INTO " + table + " (originatingIp) VALUES " + values);

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
  CHECK(q("SELECT COUNT(*) FROM " + table + " WHERE originatingIp LIKE 'ok-%' AND JSON_VALUE(location, '$.query') = originatingIp") ==
        std::to_string(300 - poison));
  CHECK_THAT(q("SELECT error FROM " + table + " WHERE originatingIp = 'deep-17'"),
             Catch::StartsWith("the store refused the answer: the answer is JSON nested 34 levels deep"));
  CHECK_THAT(q("SELECT error FROM " + table + " WHERE originatingIp = 'policy-42'"),
             Catch::StartsWith("the store refused the answer: refused by policy (error 1644)"));
  // 70 KB of reason: bounded by the engine (1,000 bytes), refused by the 300-byte column, recorded shortened.
  const auto longfail = q("SELECT error FROM " + table + " WHERE originatingIp = 'longfail-99'");
  CHECK_THAT(longfail, Catch::StartsWith("the API has no data: mmmm"));
  CHECK(longfail.size() <= 200);
  CHECK(q("SELECT COUNT(*) FROM " + table + " WHERE lock_token IS NOT NULL") == "0");
}
