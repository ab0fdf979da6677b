// The user's data is theirs, end to end through the `dibs` binary: in file mode a line whose
// target is set is not called again and comes out byte for byte, a field named "failed" is the
// user's; an API's definitive "no data" (ip-api's private ranges) ends the item with that answer,
// counted apart, and a run whose only non-done items got it exits 0.
#include "support/text.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace dibs;
namespace fs = std::filesystem;

namespace {
using test::lines_of;

struct cli_data_dir {
  explicit cli_data_dir(const std::string& name) : dir(test::scratch_dir("dibs-cli-user-data", name)) {}
  ~cli_data_dir() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  fs::path dir;
};
}  // namespace

TEST_CASE("file mode end to end: a set target is never called again and passes through, 'failed' is the user's",
          "[cli][jsonl][user-data]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  cli_data_dir d("pass-through");
  const std::string manual = R"({"id":"g","ip":"81.2.69.9","geo":{"country":"Atlantis","source":"manual"}})";
  const std::string keep_false = R"({"id":"a", "ip": "8.8.8.8", "failed": false})";
  const std::string keep_mine = R"({"id":"b","failed":"mine","ip":"1.1.1.1"})";
  std::ofstream(d.path("in.jsonl")) << manual << "\n" << keep_false << "\n" << keep_mine << "\n";

  const auto before = api.requests();
  auto [rc, out] = test::run_dibs({"enrich", "--store", "jsonl:" + d.path("in.jsonl"), "--out", d.path("out.jsonl"),
                                   "--source", "ip", "--target", "geo", "--url", api.base_url() + "/json/{ip}",
                                   "--no-progress"});
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(api.requests() - before == 2);  // the two open lines, once each (the pre-flight's answer is its line's)
  const auto got = lines_of(test::slurp(d.path("out.jsonl")));
  REQUIRE(got.size() == 3);
  CHECK(got[0] == manual);  // byte for byte: Atlantis stays
  CHECK(got[1] == R"({"id":"a", "ip": "8.8.8.8", "failed": false,"geo":)" + stub::answer_for("8.8.8.8") + "}");
  CHECK(got[2] == R"({"id":"b","failed":"mine","ip":"1.1.1.1","geo":)" + stub::answer_for("1.1.1.1") + "}");

  std::tie(rc, out) = test::run_dibs({"status", "--store", "jsonl:" + d.path("in.jsonl"), "--out", d.path("out.jsonl"),
                                      "--target", "geo"});
  CHECK(rc == 0);
  CHECK(test::last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=3 failed=0");
  api.stop();
}

TEST_CASE("a run whose only non-done items got the API's 'no data' exits 0, and --no-data-fails makes them failures",
          "[cli][no-data]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  cli_data_dir d("no-data");
  const std::string input = "{\"ip\":\"8.8.8.8\"}\n{\"ip\":\"10.0.0.1\"}\n{\"ip\":\"192.168.1.1\"}\n";
  std::ofstream(d.path("in.jsonl")) << input;
  auto enrich = [&](const std::string& out, std::vector<std::string> more) {
    std::vector<std::string> args{"enrich", "--store", "jsonl:" + d.path("in.jsonl"), "--out", d.path(out),
                                  "--source", "ip", "--url", api.base_url() + "/json/{ip}", "--no-progress"};
    args.insert(args.end(), more.begin(), more.end());
    return test::run_dibs(args);
  };

  auto [rc, out] = enrich("out.jsonl", {});
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(test::last_line(out), Catch::StartsWith("summary: completed=1 failed=0 ") && Catch::Contains(" no_data=2"));
  CHECK_THAT(out, Catch::Contains("this run: 1 done, 0 failed, 2 with no data from the API"));
  const auto got = lines_of(test::slurp(d.path("out.jsonl")));
  REQUIRE(got.size() == 3);
  CHECK(got[1] == "{\"ip\":\"10.0.0.1\",\"location\":" + stub::answer_for("10.0.0.1") + "}");  // the recipe's answer

  std::tie(rc, out) = test::run_dibs({"status", "--store", "jsonl:" + d.path("in.jsonl"), "--out", d.path("out.jsonl")});
  CHECK(rc == 0);
  CHECK(test::last_line(out) == "status: pending=0 leased_live=0 leased_expired=0 done=1 failed=0 no_data=2");

  std::tie(rc, out) = enrich("strict.jsonl", {"--no-data-fails"});
  CHECK(rc == 1);
  CHECK_THAT(test::last_line(out), Catch::StartsWith("summary: completed=1 failed=2 "));
  CHECK_THAT(test::slurp(d.path("strict.jsonl")), Catch::Contains("\"reason\":\"the API has no data: private range\""));
  api.stop();
}

// Issue 29, item 5: items named in the user's own keys. In file mode a line is named by its number
// unless --id-field names the member that names it.
TEST_CASE("file mode with --id-field: a failing line is named by the user's key in the log and in status's examples",
          "[cli][jsonl][id-field]") {
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  cli_data_dir d("id-field");
  std::ofstream(d.path("in.jsonl")) << R"({"visit_id":"evt-000123","ip":"10.0.0.1"})" << "\n"
                                    << R"({"visit_id":"evt-000124","ip":"8.8.8.8"})" << "\n"
                                    << R"({"visit_id":77,"ip":"192.168.1.1"})" << "\n";
  const auto in = "jsonl:" + d.path("in.jsonl");
  auto [rc, out] = test::run_dibs({"enrich", "--store", in, "--out", d.path("out.jsonl"), "--id-field", "visit_id",
                                   "--source", "ip", "--url", api.base_url() + "/json/{ip}", "--no-progress",
                                   "--no-data-fails", "--max-attempts", "1"});
  INFO(out);
  CHECK(rc == 1);
  CHECK_THAT(out, Catch::Contains("dibs warn: item evt-000123: failed: the API has no data: private range"));
  CHECK_THAT(out, Catch::Contains("dibs warn: item 77: failed: "));  // a number, as written
  CHECK(out.find("item 1: ") == std::string::npos);
  // The output still says the line number in dibs's record, and keeps the user's key as it was.
  const auto got = lines_of(test::slurp(d.path("out.jsonl")));
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[0], Catch::StartsWith(R"({"visit_id":"evt-000123","ip":"10.0.0.1","_dibs":{"failed":)"));

  std::tie(rc, out) = test::run_dibs({"status", "--store", in, "--out", d.path("out.jsonl"), "--id-field", "visit_id"});
  CHECK(rc == 0);
  INFO(out);
  CHECK_THAT(out, Catch::Contains("(e.g. evt-000123, 77)") || Catch::Contains("(e.g. 77, evt-000123)"));
  std::tie(rc, out) = test::run_dibs({"status", "--store", in, "--out", d.path("out.jsonl")});
  CHECK(rc == 0);
  CHECK(out.find("evt-000123") == std::string::npos);  // without the flag: line numbers

  // Every line needs its own key; a table or a collection has its own.
  std::ofstream(d.path("dup.jsonl")) << R"({"visit_id":"a","ip":"8.8.8.8"})" << "\n"
                                     << R"({"visit_id":"a","ip":"8.8.4.4"})" << "\n"
                                     << R"({"ip":"1.1.1.1"})" << "\n";
  const auto requests = api.requests();
  std::tie(rc, out) = test::run_dibs({"enrich", "--store", "jsonl:" + d.path("dup.jsonl"), "--out", d.path("dup-out.jsonl"),
                                      "--id-field", "visit_id", "--source", "ip", "--url", api.base_url() + "/json/{ip}",
                                      "--no-progress"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--id-field visit_id: lines 1 and 2 of " + d.path("dup.jsonl") + " both have 'a'"));
  std::ofstream(d.path("dup.jsonl")) << R"({"visit_id":"a","ip":"8.8.8.8"})" << "\n" << R"({"ip":"1.1.1.1"})" << "\n";
  std::tie(rc, out) = test::run_dibs({"status", "--store", "jsonl:" + d.path("dup.jsonl"), "--out", d.path("dup-out.jsonl"),
                                      "--id-field", "visit_id"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--id-field visit_id: line 2 of " + d.path("dup.jsonl") + " has no 'visit_id'"));
  std::tie(rc, out) = test::run_dibs({"status", "--store", "postgresql://nobody@127.0.0.1:1/none?table=visits", "--id-field",
                                      "visit_id"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--id-field visit_id names the lines of a file"));
  CHECK(api.requests() == requests);  // nothing was called for the refused runs
  api.stop();
}
