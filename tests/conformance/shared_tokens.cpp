// `--rate-scope store` with `--token-rate` on every store: several `dibs enrich` processes hold
// one tokens-a-minute limit together (a schedule of tokens in dibs_rate) against an LLM API that
// states no limit and only refuses (tests/servers/llm_api.py --no-headers, Python's http.server).
#include "support/backend.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include "http_servers/llm_api.hpp"

#include <catch2/catch.hpp>

#include <chrono>

using namespace dibs;
using namespace std::chrono_literals;

namespace {
using test::db;
}  // namespace

BACKEND_TEST_CASE("three dibs enrich processes with --rate-scope store keep one --token-rate together",
                  "[enrich][rate][shared-rate][llm]") {
  // The API meters 600 tokens a minute and states nothing (a self-hosted server behind a limiter
  // that only refuses): --token-rate 600/min is its limit. Alone, each process would hold the
  // whole of it (three times the limit between them: a third of the calls or more refused); on
  // the store they hold it once.
  test::llm_api api({"--tpm", "600", "--latency-ms", "10", "--latency-per-token-ms", "0", "--no-headers"});
  auto s = db.fresh("sharedtokens");
  REQUIRE(s.seed(48, 23) == 48);
  const std::vector<std::string> where(s.where.begin() + 2, s.where.end());  // --db, --collection
  const auto argv = api.enrich_rows(test::dibs_binary(), s.uri(), where, {"--token-rate", "600/min", "--rate-scope", "store"});
  for (const auto& end : test::run_at_once(argv, 3)) {
    INFO(end.out);
    CHECK(end.rc == 0);
  }
  CHECK(s.stats_blocking().done == 48);
  const auto settled = api.stat("tokens_settled");
  INFO("tokens settled: " << settled << ", requests: " << api.stat("requests"));
  REQUIRE(settled > 600);  // 48 answers of 13-20 tokens: more than the API's whole bucket, whose refill was waited for
  CHECK(api.stat("refused_429") <= 1);
}
