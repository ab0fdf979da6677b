// `dibs retry` and `dibs status` in file mode as users run them: after a finished run (OUT
// written, the journal gone) and while a journal exists; status finds the journal without --out,
// and a missing input is an error that names it.
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace dibs;
namespace fs = std::filesystem;

namespace {
using test::run_dibs;

// How many lines of OUT failed, and how many hold an answer.
std::pair<std::size_t, std::size_t> failed_and_done(const std::string& out) {
  std::ifstream f(out);
  simdjson::dom::parser p;
  std::size_t failed = 0, done = 0;
  for (std::string line; std::getline(f, line);) {
    simdjson::dom::element doc, x;
    REQUIRE_FALSE(p.parse(line).get(doc));
    if (!doc["_dibs"]["failed"].get(x)) ++failed;
    else if (!doc["location"]["query"].get(x)) ++done;
  }
  return {failed, done};
}
}  // namespace

TEST_CASE("file mode: dibs retry puts failed lines back, after a finished run and in a journal", "[jsonl][retry][status][e2e]") {
  const fs::path dir = fs::temp_directory_path() / ("dibs-retry-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto in = (dir / "in.jsonl").string(), out = (dir / "out.jsonl").string();
  {
    std::ofstream f(in);
    for (int i = 1; i <= 20; ++i) f << "{\"originatingIp\":\"8.8." << i << ".1\"}\n";
    f << "{\"originatingIp\":\"192.168.1.1\"}\n{\"originatingIp\":\"192.168.1.2\"}\n{\"originatingIp\":\"nonsense\"}\n";
  }
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  // --no-data-fails: ip-api's "no data" answers as failures, for this test's failures to retry.
  const std::vector<std::string> enrich{"enrich", "--store", "jsonl:" + in, "--out", out, "--no-progress", "--no-data-fails", "--url",
                                        api.base_url() + "/json/{originatingIp}"};
  auto [rc, text] = run_dibs(enrich);
  INFO(text);
  REQUIRE(rc == 1);
  CHECK(failed_and_done(out) == std::pair<std::size_t, std::size_t>{3, 20});
  REQUIRE_FALSE(fs::exists(out + ".journal"));

  // A finished run without --out: its journal is gone and IN alone would say all 23 lines are
  // pending (exit 0, issue 29): refused, naming --out; retry likewise (IN has no failures).
  for (const char* command : {"status", "retry"}) {
    std::tie(rc, text) = run_dibs({command, "--store", "jsonl:" + in});
    INFO(text);
    CHECK(rc == 2);
    CHECK_THAT(text, Catch::Contains("dibs: error: --out is needed: in file mode a run's outcomes are in its OUT file"));
    CHECK_THAT(text, Catch::Contains("Name the run: --store jsonl:" + in + " --out OUT.jsonl"));
    CHECK(text.find("pending=") == std::string::npos);
  }

  // A finished run: status reads OUT (named), with the reasons.
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in, "--out", out, "--json"});
  REQUIRE(rc == 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_FALSE(parser.parse(test::last_line(text)).get(doc));
  CHECK(uint64_t(doc["failed"]) == 3);
  CHECK(uint64_t(doc["done"]) == 20);
  CHECK(std::string_view(doc["failure_reasons"].at(0)["reason"]) == "the API has no data: private range");
  CHECK(simdjson::dom::array(doc["failure_reasons"].at(0)["example_ids"]).size() == 2);
  CHECK(std::string_view(doc["failure_reasons"].at(0)["example_ids"].at(0)) == "21");  // the line numbers

  // --since can't apply: the journal records no failure times.
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--since", "1h"});
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("--since: file mode records no failure times"));

  // --reason-is: the whole reason, or nothing (the file is left as it was).
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--reason-is", "invalid query"});
  REQUIRE(rc == 0);
  CHECK_THAT(text, Catch::Contains("retry: 0 failed items back to pending"));
  CHECK_FALSE(fs::exists(out + ".journal"));
  // retry --reason after the finished run: a journal made from OUT, without the lines put back.
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--reason", "invalid"});
  INFO(text);
  REQUIRE(rc == 0);
  CHECK_THAT(text, Catch::Contains("retry: 1 failed item back to pending in jsonl " + in + " -> " + out));
  REQUIRE(fs::exists(out + ".journal"));
  // status without --out finds that journal next to the input.
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in});
  REQUIRE(rc == 0);
  CHECK_THAT(text, Catch::Contains("the journal " + out + ".journal belongs to " + in));
  CHECK(test::last_line(text) == "status: pending=1 leased_live=0 leased_expired=0 done=20 failed=2");
  // And retry appends to an existing journal (a retry record per line); --reason-is takes the
  // whole reason's group.
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--reason-is", "the API has no data: private range"});
  REQUIRE(rc == 0);
  CHECK_THAT(text, Catch::Contains("retry: 2 failed items back to pending"));
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in, "--out", out});
  CHECK(test::last_line(text) == "status: pending=3 leased_live=0 leased_expired=0 done=20 failed=0");

  // The next run asks the API only for the three lines and rewrites OUT whole.
  const auto served = api.requests();
  auto fixed = enrich;
  fixed.back() = api.base_url() + "/json/8.8.8.8?ip={originatingIp}";
  std::tie(rc, text) = run_dibs(fixed);
  INFO(text);
  CHECK(rc == 0);
  CHECK(api.requests() - served == 3);  // the three lines, once each: the pre-flight's answer is its line's own
  CHECK_THAT(text, Catch::Contains("store now: 23 done, 0 failed, 0 pending, 0 leased; this run: 3 done, 0 failed"));
  CHECK(failed_and_done(out) == std::pair<std::size_t, std::size_t>{0, 23});
  CHECK_FALSE(fs::exists(out + ".journal"));
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--out", out});
  CHECK(rc == 0);
  CHECK_THAT(text, Catch::Contains("retry: 0 failed items back to pending"));
  fs::remove_all(dir);
}

TEST_CASE("file mode: dibs status of a missing input is an error naming it", "[jsonl][status]") {
  const std::string missing = (fs::temp_directory_path() / ("dibs-missing-" + std::to_string(::getpid()) + ".jsonl")).string();
  for (const char* command : {"status", "retry"}) {
    auto [rc, text] = run_dibs({command, "--store", "jsonl:" + missing});
    INFO(text);
    CHECK(rc == 2);
    CHECK_THAT(text, Catch::Contains("dibs: error: --store jsonl:" + missing + ": there is no file " + missing));
  }
}

TEST_CASE("file mode: retry and status read the target from the journal, or from a finished OUT's done lines, and a "
          "finished OUT read with another target given is refused, never made a journal that redoes it",
          "[jsonl][retry][status][e2e]") {
  const fs::path dir = fs::temp_directory_path() / ("dibs-retry-target-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto in = (dir / "customers.jsonl").string(), out = (dir / "enriched.jsonl").string();
  {
    std::ofstream f(in);
    for (int i = 1; i <= 30; ++i) f << "{\"cust_id\":\"c" << i << "\",\"ip\":\"8.8." << i << ".1\"}\n";
    f << "{\"cust_id\":\"c31\",\"ip\":\"192.168.1.1\"}\n";
  }
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const std::vector<std::string> enrich{"enrich", "--store", "jsonl:" + in, "--out", out, "--no-progress", "--no-data-fails",
                                        "--source", "ip", "--target", "geo", "--url", api.base_url() + "/json/{ip}"};
  auto [rc, text] = run_dibs(enrich);
  INFO(text);
  REQUIRE(rc == 1);  // the private address failed
  const auto calls = api.requests();

  // Read with a target the user gave and no line holds: refused, never a journal that redoes the
  // 30 lines done (it once wrote one with no answers, "1 back", and the next run asked them all again).
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--target", "location", "--reason", "private"});
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("has no answer in location and no failure record") && Catch::Contains("(the line has: cust_id, ip, geo)") &&
                       Catch::Contains("give --target"));
  CHECK_FALSE(fs::exists(out + ".journal"));
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in, "--out", out, "--target", "location"});
  CHECK(rc == 2);  // not "done=31": the lines are read with the run's target or not at all
  // Without --target (the run's journal, which named it, is gone): the member OUT's done lines
  // added is the run's target. It used to say "line 1 of the output has no answer in location".
  std::tie(rc, text) = run_dibs({"failed", "--store", "jsonl:" + in, "--run-out", out});
  CHECK(rc == 0);
  CHECK_THAT(text, Catch::Contains("holds the run's answers in 'geo'") && Catch::Contains("{\"key\":\"31\"") && Catch::Contains("private range"));
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in, "--out", out});
  CHECK(rc == 0);
  CHECK(test::last_line(text) == "status: pending=0 leased_live=0 leased_expired=0 done=30 failed=1");

  // The retry's journal records the target; the commands after it need no --target.
  std::tie(rc, text) = run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--reason", "private"});
  REQUIRE(rc == 0);
  CHECK_THAT(text, Catch::Contains("retry: 1 failed item back to pending"));
  REQUIRE(fs::exists(out + ".journal"));
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in});  // found next to IN, target and all
  CHECK(rc == 0);
  CHECK(test::last_line(text) == "status: pending=1 leased_live=0 leased_expired=0 done=30 failed=0");
  std::tie(rc, text) = run_dibs({"status", "--store", "jsonl:" + in, "--out", out, "--target", "location"});
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("--target location contradicts the journal") && Catch::Contains("writes its answers to geo"));
  // (release has nothing to read: a file's leases live in the process that runs it.)
  std::tie(rc, text) = run_dibs({"release", "--store", "jsonl:" + in, "--out", out, "--worker", "gone", "--yes"});
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("a file's leases live only in the process that runs it"));
  std::vector<std::string> again{"enrich", "--store", "jsonl:" + in, "--out", out, "--no-progress", "--no-data-fails",
                                 "--source", "ip", "--url", api.base_url() + "/json/{ip}"};
  std::tie(rc, text) = run_dibs(again);  // no --target: the journal's
  CHECK(rc == 1);
  CHECK(api.requests() - calls <= 1);  // the line put back (the pre-flight's answer is its own), never the 30 done
  fs::remove_all(dir);
}

TEST_CASE("file mode: a refused run leaves no file behind, and status then finds no stray journal", "[jsonl][status][e2e]") {
  const fs::path dir = fs::temp_directory_path() / ("dibs-refused-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto in = (dir / "customers.jsonl").string();
  {
    std::ofstream f(in);
    for (int i = 1; i <= 5; ++i) f << "{\"ip\":\"8.8." << i << ".1\"}\n";
    f << "not json\n";  // a line that fails as it is read: its failure is no reason to keep a journal
  }
  // Refused twice, by the pre-flight (nothing listens at port 1) under two OUT names. (The
  // pre-flight claims the item it asks: a claim journaled the lines that failed as IN was read,
  // so a refused run left a journal, its target pinned for the next run.)
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    const auto [rc, text] = run_dibs({"enrich", "--store", "jsonl:" + in, "--out", (dir / name).string(), "--source", "ip",
                                      "--target", "geo", "--url", "http://127.0.0.1:1/json/{ip}", "--no-progress"});
    INFO(text);
    CHECK(rc == 2);
  }
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename() != "customers.jsonl";
  CHECK(files == 0);
  const auto [rc, text] = run_dibs({"status", "--store", "jsonl:" + in, "--source", "ip", "--target", "geo"});
  INFO(text);
  CHECK_THAT(text, !Catch::Contains("several journals"));
  fs::remove_all(dir);
}
