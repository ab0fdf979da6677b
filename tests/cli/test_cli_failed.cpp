// `dibs failed` and `dibs retry --from` in file mode (the database stores: conformance/failed_items.cpp):
// the failed lines of a run, their source as IN has it, no time (the journal keeps none, --since
// is refused), and exactly the lines fed back put back -- before the run ends (the journal) and
// after (a finished OUT).
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace dibs;

namespace {
std::vector<std::string> failed_lines_in(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("{\"key\":", 0) == 0) out.push_back(l);
  return out;
}
}  // namespace

TEST_CASE("dibs failed lists a file's failed lines, and dibs retry --from puts exactly those back", "[cli][failed][jsonl]") {
  const auto dir = test::scratch_dir("dibs-cli-failed", "jsonl");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto in = (dir / "in.jsonl").string();
  const auto out = (dir / "out.jsonl").string();
  {
    std::ofstream f(in);
    f << "{\"ip\":\"8.8.8.8\"}\n{\"ip\":\"192.168.1.1\"}\n{\"ip\":\"1.1.1.1\"}\n{\"ip\":\"10.0.0.7\"}\n{\"ip\":\"nonsense\"}\n";
  }
  const std::vector<std::string> enrich{"enrich", "--store", "jsonl:" + in, "--out", out, "--url", api.base_url() + "/json/{ip}",
                                        "--no-progress", "--no-data-fails", "--max-attempts", "1"};
  auto [rc, text] = test::run_dibs(enrich);
  INFO(text);
  REQUIRE(rc == 1);
  const std::vector<std::string> where{"--store", "jsonl:" + in, "--run-out", out, "--source", "ip"};
  auto failed = [&](std::vector<std::string> more) {
    std::vector<std::string> args{"failed"};
    args.insert(args.end(), where.begin(), where.end());
    args.insert(args.end(), more.begin(), more.end());
    return test::run_dibs(args);
  };
  std::tie(rc, text) = failed({});
  REQUIRE(rc == 0);
  auto lines = failed_lines_in(text);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == R"({"key":"2","source":"192.168.1.1","reason":"the API has no data: private range","http_status":200,)"
                    R"("answer":null,"attempts":1,"failed_at":null})");
  CHECK_THAT(lines[1], Catch::StartsWith(R"({"key":"4","source":"10.0.0.7","reason":"the API has no data: private range")"));
  CHECK_THAT(lines[2], Catch::StartsWith(R"({"key":"5","source":"nonsense","reason":"the API has no data: invalid query")"));
  std::tie(rc, text) = failed({"--reason", "private"});
  CHECK(failed_lines_in(text).size() == 2);
  std::tie(rc, text) = failed({"--since", "1h"});
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("file mode records no failure times"));

  // Into a file, and back through dibs retry --from: line 4 only.
  const auto picked = (dir / "picked.jsonl").string();
  std::tie(rc, text) = failed({"--reason-is", "the API has no data: private range", "--out", picked});
  REQUIRE(rc == 0);
  CHECK(fs::status(picked).permissions() == (fs::perms::owner_read | fs::perms::owner_write));
  auto two = failed_lines_in(test::slurp(picked));
  REQUIRE(two.size() == 2);
  {
    std::ofstream f(picked);
    f << two[1] << "\n";
  }
  std::tie(rc, text) = test::run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--from", picked});
  INFO(text);
  CHECK(rc == 0);
  CHECK_THAT(text, Catch::Contains("retry: 1 failed item back to pending"));
  std::tie(rc, text) = failed({});
  lines = failed_lines_in(text);
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::StartsWith(R"({"key":"2",)"));
  CHECK_THAT(lines[1], Catch::StartsWith(R"({"key":"5",)"));
  // A line that is not one of dibs failed's is refused, by number.
  {
    std::ofstream f(picked);
    f << two[0] << "\n{\"nokey\":1}\n";
  }
  std::tie(rc, text) = test::run_dibs({"retry", "--store", "jsonl:" + in, "--out", out, "--from", picked});
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("line 2 is no line of `dibs failed`"));
  api.stop();
  fs::remove_all(dir);
}

TEST_CASE("dibs failed on a file with no run beside it asks for --run-out, the flag it has", "[cli][failed][jsonl]") {
  const auto dir = test::scratch_dir("dibs-cli-failed", "no-run");
  const auto in = (dir / "in.jsonl").string();
  std::ofstream(in) << "{\"ip\":\"8.8.8.8\"}\n";
  auto [rc, text] = test::run_dibs({"failed", "--store", "jsonl:" + in});
  CHECK(rc == 2);
  INFO(text);
  CHECK(text.find("--run-out is needed") != std::string::npos);
  CHECK(text.find("--run-out OUT.jsonl") != std::string::npos);
  CHECK(text.find("--out is needed") == std::string::npos);
}

TEST_CASE("dibs failed refuses an --out that is the run's own output, input or journal, and leaves it whole",
          "[cli][failed][jsonl]") {
  // A user who carries enrich's --out over to dibs failed: the failed lines' file would have been
  // opened (emptied) before the run's output was read, its paid answers gone.
  const auto dir = test::scratch_dir("dibs-cli-failed", "own-files");
  const auto in = (dir / "in.jsonl").string(), out = (dir / "out.jsonl").string();
  std::ofstream(in) << "{\"ip\":\"8.8.8.8\"}\n";
  std::ofstream(out) << "{\"ip\":\"8.8.8.8\",\"location\":{\"status\":\"success\"}}\n";
  const auto size = fs::file_size(out);
  for (const auto& named : {out, (dir / "." / "out.jsonl").string(), in}) {
    auto [rc, text] = test::run_dibs({"failed", "--store", "jsonl:" + in, "--run-out", out, "--out", named});
    INFO(text);
    CHECK(rc == 2);
    CHECK_THAT(text, Catch::Contains("the failed lines go to a file of their own"));
  }
  CHECK(fs::file_size(out) == size);
  CHECK(fs::file_size(in) > 0);
}

TEST_CASE("dibs failed refuses an --out that is the journal it found next to the input, and leaves it whole",
          "[cli][failed][jsonl]") {
  // Without --run-out, the run's journal is found by its header: the check must come after that
  // search, or the journal (a stopped run's paid answers) is emptied.
  const auto dir = test::scratch_dir("dibs-cli-failed", "found-journal");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto in = (dir / "in.jsonl").string(), out = (dir / "out.jsonl").string();
  std::ofstream(in) << "{\"ip\":\"8.8.8.8\"}\n{\"ip\":\"1.1.1.1\"}\n{\"ip\":\"9.9.9.9\"}\n{\"ip\":\"4.4.4.4\"}\n";
  auto [rc, text] = test::run_dibs({"enrich", "--store", "jsonl:" + in, "--out", out, "--url", api.base_url() + "/json/{ip}",
                                    "--no-progress", "--max-calls", "2", "--no-preflight"});
  INFO(text);
  REQUIRE(fs::exists(out + ".journal"));  // stopped by its budget: the journal holds the answers bought
  const auto size = fs::file_size(out + ".journal");
  std::tie(rc, text) = test::run_dibs({"failed", "--store", "jsonl:" + in, "--source", "ip", "--out", out + ".journal"});
  INFO(text);
  CHECK(rc == 2);
  CHECK_THAT(text, Catch::Contains("is the run's journal"));
  CHECK(fs::file_size(out + ".journal") == size);
}
