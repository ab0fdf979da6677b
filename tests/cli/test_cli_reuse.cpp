// `--reuse-answers` and `--distinct` through the real binary: the demo's stub serves one request
// per address, and the summary, its JSON and the end line say how many answers were reused.
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

namespace {
struct reuse_run {
  int code;
  std::string out;
};
reuse_run dibs_run(std::vector<std::string> args) {
  args.insert(args.begin(), dibs::test::dibs_binary());
  dibs::test::child_process p(args, true);
  std::string out;
  const int code = p.finish(out);
  return {code, out};
}
}  // namespace

TEST_CASE("dibs demo --distinct 20 --reuse-answers: 200 documents, 20 requests, the hit ratio told", "[reuse][cli]") {
  const auto r = dibs_run({"demo", "--docs", "200", "--distinct", "20", "--reuse-answers", "--no-progress", "--samples", "0",
                           "--summary-json", "-"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("drawn from 20 addresses"));
  CHECK_THAT(r.out, Catch::Contains("200 done, 0 failed"));
  CHECK_THAT(r.out, Catch::Contains("stub served 20 requests"));
  CHECK_THAT(r.out, Catch::Contains("\"api_calls\":20,\"answers_reused\":"));
  CHECK_THAT(r.out, Catch::Contains("\"answer_hit_ratio\":0.900"));
  CHECK_THAT(r.out, Catch::Contains(" api_calls=20 reused="));
  CHECK_THAT(r.out, Catch::Contains(" hit_ratio=0.900"));
}

TEST_CASE("without --reuse-answers the same documents make one request each, and no reuse is told", "[reuse][cli]") {
  const auto r = dibs_run({"demo", "--docs", "200", "--distinct", "20", "--no-progress", "--samples", "0"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("stub served 200 requests"));
  CHECK_THAT(r.out, !Catch::Contains("hit_ratio"));
}

TEST_CASE("dibs demo --reuse-answers refuses what it can't do, naming the flag", "[reuse][cli]") {
  auto r = dibs_run({"demo", "--docs", "10", "--batch", "--reuse-answers"});
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--reuse-answers works with --url"));
  r = dibs_run({"demo", "--docs", "10", "--reuse-answers", "store"});
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--reuse-answers store keeps answers in a database"));
  r = dibs_run({"demo", "--docs", "10", "--reuse-answers", "disk"});
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--reuse-answers"));
  r = dibs_run({"demo", "--docs", "10", "--reuse-answers", "--answer-ttl", "0s"});
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--answer-ttl must be more than 0"));
  r = dibs_run({"demo", "--docs", "10", "--reuse-answers", "--answer-cache-bytes", "lots"});
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--answer-cache-bytes"));
}

TEST_CASE("dibs seed --distinct 10: 100 lines, exactly 10 addresses", "[reuse][cli][seed]") {
  const std::string path = "/tmp/dibs-seed-distinct-" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  const auto r = dibs_run({"seed", "--store", "jsonl:" + path, "--docs", "100", "--distinct", "10"});
  INFO(r.out);
  CHECK(r.code == 0);
  std::ifstream in(path);
  std::set<std::string> lines;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) lines.insert(line);
  std::remove(path.c_str());
  CHECK(n == 100);
  CHECK(lines.size() == 10);
}
