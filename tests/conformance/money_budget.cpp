// A budget in money (`--budget 0.0005USD/day` with `--price`) kept in the store and shared by two
// processes calling an LLM API (tests/servers/llm_api.py, Python's http.server): between them the
// API's usage at the prices never passes it; then each claims nothing more, exits with status 4
// and says so; no row failed or spent an attempt on a call not made; a third process starting
// after makes no call at all.
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include "http_servers/llm_api.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
using test::db;
}  // namespace

BACKEND_TEST_CASE("a budget in money shared by two processes: the API's usage at the prices never passes it, then exit 4",
                  "[budget][money][llm]") {
  test::llm_api api({"--tpm", "0", "--latency-ms", "20", "--latency-per-token-ms", "0"});
  auto s = db.fresh("moneybudget");
  REQUIRE(s.seed(60, 29) == 60);
  // A dollar a million tokens, input and output alike: the budget's 500 millionths are 500 tokens
  // of usage; a call uses 13-20 (its most, estimated before it goes, about 40).
  const std::vector<std::string> where(s.where.begin() + 2, s.where.end());  // --db, --collection
  const auto run = api.enrich_rows(test::dibs_binary(), s.uri(), where, {"--budget", "0.0005USD/day", "--price", "input=1/1M,output=1/1M"});
  // Without an output price the body's max_tokens would count as free: refused before any call.
  auto input_price_only = api.enrich_rows(test::dibs_binary(), s.uri(), where, {"--budget", "0.0005USD/day", "--price", "input=1/1M"});
  input_price_only.erase(input_price_only.begin());  // run_dibs puts the binary first
  const auto no_output_price = test::run_dibs(input_price_only);
  INFO(no_output_price.second);
  CHECK(no_output_price.first == 2);
  CHECK_THAT(no_output_price.second, Catch::Contains("give output=P/1M too"));
  CHECK(api.stat("requests") == 0);

  const auto two = test::run_at_once(run, 2);
  INFO(two[0].out);
  INFO(two[1].out);
  for (const auto& end : two) CHECK(end.rc == 4);
  CHECK_THAT(two[0].out + two[1].out, Catch::Contains("--budget 0.0005USD/day spent"));
  const auto settled = api.stat("tokens_settled");
  INFO("tokens settled: " << settled << ", answers: " << api.stat("ok"));
  CHECK(settled <= 500);            // the money spent, at the prices: never past the budget
  CHECK(settled >= 500 - 4 * 40);   // and most of it used: a call's most is given back to what its usage did not cost
  const auto st = s.stats_blocking();
  CHECK(st.failed == 0);
  CHECK(st.done + st.pending == 60);
  CHECK(static_cast<long>(st.done) <= api.stat("ok"));  // every row written was answered (a pre-flight's twice at most)
  CHECK(static_cast<long>(st.done) >= api.stat("ok") - 2);
  // The rows the budget left unasked spent no attempt, though claimed and given back (refused at
  // their turn, or claimed ahead when the run stopped): a few budget-cut runs a day would
  // otherwise fail rows never sent.
  if (db.sql)
    CHECK(s.query_value("SELECT COUNT(*) FROM " + s.name + " WHERE location IS NULL AND dibs_attempts > 0") ==
          std::optional<std::string>("0"));

  // Spent for the day: a third process claims nothing and makes no call, its pre-flight's included.
  const auto before = api.stat("requests");
  test::child_process c(run, true);
  std::string out_c;
  CHECK(c.finish(out_c) == 4);
  INFO(out_c);
  CHECK(api.stat("requests") == before);
  // dibs status says it in dollars.
  std::vector<std::string> status_argv{"status", "--store", s.uri()};
  status_argv.insert(status_argv.end(), where.begin(), where.end());
  const auto status = test::run_dibs(status_argv);
  INFO(status.second);
  CHECK_THAT(status.second, Catch::Contains(" USD day ") && Catch::Contains("of $0.0005 used"));
}
