// One bad item costs that item, never the run, on a real SQL server: answers the server refuses
// (each backend's own: JSON nested too deep for MariaDB's JSON check, a CHECK constraint or a
// trigger of the user's, JSON jsonb can't hold, a failure reason too long for the user's error
// column) are failed with the server's reason, and every other row of the same batches lands.
// Before the engine split refused batches, one such answer blocked its shard forever: the batch
// was retried without end while its leases were renewed.
#include "support/backend.hpp"
#include "support/engine_configs.hpp"

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <map>
#include <string>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::db;

std::string nested_json(int depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

// The answers by the row's source ("<kind>-<index>"): poison for some, a plain object for the rest.
class scripted_processor final : public processor {
 public:
  awaitable<outcome> process(job j) override {
    const std::string src = j.fields.at(0).value;
    const auto kind = src.substr(0, src.find('-'));
    if (kind == "deep") co_return outcome::done("{\"a\":" + nested_json(33) + "}");
    if (kind == "refuse") co_return outcome::done(R"({"refuse":true,"query":")" + src + "\"}");
    if (kind == "trigger") co_return outcome::done(R"({"trigger":true,"query":")" + src + "\"}");
    if (kind == "nul") co_return outcome::done(R"({"text":"a\u0000b","query":")" + src + "\"}");
    if (kind == "longfail") co_return outcome::fail("the API has no data: " + std::string(70'000, 'm'));
    co_return outcome::done(R"({"status":"success","query":")" + src + "\"}");
  }
};
}  // namespace

BACKEND_TEST_CASE("answers the server refuses fail alone, with the server's reason, and the run ends", "[poison]") {
  auto t = db.fresh("poison");
  const auto& table = t.name;
  const auto& source = db.sql_of().source_column;
  for (const auto& statement : db.poison.setup(table)) t.execute(statement);
  const auto poisoned = db.poison.rows(table);
  std::map<int, std::string> kind_of;
  for (const auto& p : poisoned) kind_of[p.index] = p.kind;
  std::string values;
  for (int i = 0; i < 300; ++i)
    values += (i ? ",('" : "('") + (kind_of.count(i) ? kind_of[i] : std::string("ok")) + "-" + std::to_string(i) + "')";
  t.execute("INSERT INTO " + table + " (" + source + ") VALUES " + values);
  const auto poison = static_cast<std::uint64_t>(poisoned.size());

  engine e(test::config_of(1, 60, 50, 30s), t.store, [](const shard_info&) { return std::make_unique<scripted_processor>(); });
  std::promise<void> ended;
  e.on_finished([&] { ended.set_value(); });
  e.start();
  const bool ended_by_itself = ended.get_future().wait_for(120s) == std::future_status::ready;
  if (!ended_by_itself) e.stop_now();
  e.wait();
  REQUIRE(ended_by_itself);

  const auto st = t.stats_blocking();
  CHECK(st.done == 300 - poison);
  CHECK(st.failed == poison);
  CHECK(st.drained());
  CHECK(e.summary().completed == 300 - poison);
  CHECK(e.summary().failed == poison);
  auto q = [&](const std::string& sql) { return t.query_value(sql).value_or("NULL"); };
  CHECK(q("SELECT COUNT(*) FROM " + table + " WHERE " + source + " LIKE 'ok-%' AND " +
          db.sql_of().json_text("location", "query") + " = " + source) == std::to_string(300 - poison));
  for (const auto& p : poisoned) {
    const auto error = q("SELECT dibs_error FROM " + table + " WHERE " + source + " = '" + p.kind + "-" + std::to_string(p.index) + "'");
    INFO(p.kind << "-" << p.index);
    if (p.prefix)
      CHECK_THAT(error, Catch::StartsWith(p.error));
    else
      CHECK(error == p.error);
    // 70 KB of reason: bounded by the engine (1,000 bytes), refused by the 300-byte column, recorded shortened.
    if (p.kind == "longfail") CHECK(error.size() <= db.poison.longest_error);
  }
  CHECK(q("SELECT COUNT(*) FROM " + table + " WHERE dibs_failed_at IS NOT NULL AND dibs_attempts = 1") == std::to_string(poison));
  CHECK(q("SELECT COUNT(*) FROM " + table + " WHERE dibs_lock_token IS NOT NULL") == "0");
}
