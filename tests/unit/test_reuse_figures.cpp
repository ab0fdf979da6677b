// Where the answer-reuse hit ratio is told: the summary line and JSON, enrich's end line and the
// progress line; and nothing of it when reuse is off.
#include "apps/dibs/end_line.hpp"
#include "apps/dibs/progress_line.hpp"

#include <dibs/engine.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

namespace {
run_summary reused_run() {
  run_summary s;
  s.completed = 1000;
  s.elapsed_s = 2;
  s.answer_calls = 100;
  s.answers_reused = 850;
  s.answers_joined = 50;
  return s;
}
}  // namespace

TEST_CASE("the summary tells api calls, reused, joined and the hit ratio only with answer reuse", "[reuse][summary]") {
  const auto s = reused_run();
  CHECK(s.reuses_answers());
  CHECK(s.answer_hit_ratio() == Approx(0.9));
  CHECK(s.line() ==
        "summary: completed=1000 failed=0 lost_leases=0 released=0 elapsed_s=2.000 docs_per_s=500.0 api_calls=100 "
        "reused=850 joined=50 hit_ratio=0.900");
  CHECK(s.json() ==
        "{\"completed\":1000,\"failed\":0,\"no_data\":0,\"lost_leases\":0,\"released\":0,\"retries\":0,\"renewals\":0,"
        "\"elapsed_s\":2.000,\"docs_per_s\":500.0,\"api_calls\":100,\"answers_reused\":850,\"answers_joined\":50,"
        "\"answer_hit_ratio\":0.900,\"answers_from_store\":0}");
  run_summary off;
  off.completed = 3;
  CHECK_FALSE(off.reuses_answers());
  CHECK(off.line().find("hit_ratio") == std::string::npos);
  CHECK(off.json().find("api_calls") == std::string::npos);
}

TEST_CASE("enrich's end line tells the reuse before the claim conflicts", "[reuse][summary]") {
  cli::end_line_facts f;
  f.store = "memory";
  f.run = reused_run();
  CHECK(cli::enrich_end_line(f) ==
        "enrich: memory: store now: 0 done, 0 failed, 0 pending, 0 leased; this run: 1000 done, 0 failed; answers "
        "reused: 850 cached, 50 joined, 100 API calls (90% hits); claim conflicts 0");
}

TEST_CASE("the progress line tells the share of reused answers, and drops it first", "[reuse][progress]") {
  cli::progress_figures p;
  p.total = 1000;
  p.done = 400;
  p.rate = 100;
  p.answer_calls = 40;
  p.answers_shared = 360;
  const auto line = cli::progress_line(p);
  CHECK(line == "done 400/1000  failed 0  100 docs/s  ETA 0m06s  in flight 0  retries 0  reused 90%");
  CHECK(cli::progress_line(p, line.size() - 1).find("reused") == std::string::npos);
  CHECK(cli::progress_line(p, line.size() - 1).find("retries 0") != std::string::npos);
  p.answer_calls = p.answers_shared = 0;
  CHECK(cli::progress_line(p).find("reused") == std::string::npos);
}
