// The real dibs program against what an operator's setup or its data can hold: an API key in a
// --url query under any name (never printed; the URL may come from a file or the environment, out
// of `ps`), a source value of megabytes (that item fails, the run goes on), a symbolic link
// planted where --summary-json writes (refused, never followed).
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace dibs;
namespace fs = std::filesystem;

namespace {

fs::path hostile_scratch(const std::string& name) { return test::scratch_dir("dibs-cli-hostile", name); }
using test::slurp;

// `dibs ARGS` with `env` (NAME=VALUE) set for it alone: its exit status and everything it printed.
std::pair<int, std::string> dibs_with_env(const std::vector<std::string>& env, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(test::dibs_binary());
  argv.insert(argv.end(), args.begin(), args.end());
  test::child_process p(argv, /*merge_stderr=*/true);
  std::string out;
  const int rc = p.finish(out);
  return {rc, out};
}

// A JSON Lines file of `n` items with an originatingIp each.
fs::path seeded(const fs::path& dir, int n) {
  const auto in = dir / "in.jsonl";
  std::ofstream f(in);
  for (int i = 1; i <= n; ++i) f << "{\"_id\":" << i << ",\"originatingIp\":\"8.8.4." << i << "\"}\n";
  return in;
}

// The secrets of a URL whose parameters are named so that no name says "secret".
const std::vector<std::string> secrets{"S3cretAuth", "S3cretApp", "S3cretSig", "S3cretKey"};
const std::string query = "?auth=S3cretAuth&appid=S3cretApp&sig=S3cretSig&key=S3cretKey&fields=status";

void check_no_secret(const std::string& out) {
  INFO(out);
  for (const auto& s : secrets) CHECK(out.find(s) == std::string::npos);
}

}  // namespace

TEST_CASE("secrets: no query value of --url is printed, whatever its parameter is called", "[cli][secrets]") {
  const auto dir = hostile_scratch("redact");
  const auto in = seeded(dir, 3);
  // A bad template: its message shows it, every query value masked.
  auto [rc, out] = test::run_dibs({"enrich", "--store", "jsonl:" + in.string(), "--out", (dir / "out.jsonl").string(),
                                   "--url", "http://127.0.0.1:1/json/{originatingIp" + query, "--no-progress"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("bad --url") && Catch::Contains("auth=***"));
  check_no_secret(out);
  // The pre-flight against an API that isn't there: its refusal shows the URL as sent, masked.
  std::tie(rc, out) = test::run_dibs({"enrich", "--store", "jsonl:" + in.string(), "--out", (dir / "out.jsonl").string(),
                                      "--url", "http://127.0.0.1:1/json/{originatingIp}" + query, "--no-progress"});
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("the API can't be used: --url http://127.0.0.1:1/json/") &&
                      Catch::Contains("?auth=***&appid=***&sig=***&key=***&fields=***"));
  check_no_secret(out);
  // The same for --batch-url.
  std::tie(rc, out) = test::run_dibs({"enrich", "--store", "jsonl:" + in.string(), "--out", (dir / "out.jsonl").string(),
                                      "--batch-url", "http://127.0.0.1:1/batch" + query, "--no-progress"});
  CHECK(rc == 2);
  check_no_secret(out);
  fs::remove_all(dir);
}

TEST_CASE("secrets: --url from a file only its owner reads, or from DIBS_URL, keeps the key out of the command line",
          "[cli][secrets]") {
  const auto dir = hostile_scratch("url-file");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto in = seeded(dir, 3);
  const std::string url = api.base_url() + "/json/{originatingIp}?key=S3cretKey";
  const auto file = dir / "api-url";
  std::ofstream(file) << url << "\n";
  const std::vector<std::string> run{"enrich", "--store", "jsonl:" + in.string(), "--out", (dir / "out.jsonl").string(),
                                     "--no-progress"};
  // Readable by others: refused before anything runs, saying how to fix it.
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  auto args = run;
  args.insert(args.end(), {"--url-file", file.string()});
  auto [rc, out] = test::run_dibs(args);
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("--url-file") && Catch::Contains("chmod 600"));
  // The owner's alone: the run calls the API with the key.
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  std::tie(rc, out) = test::run_dibs(args);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("summary: completed=3 failed=0"));
  check_no_secret(out);
  // From the environment.
  fs::remove(dir / "out.jsonl");
  std::tie(rc, out) = dibs_with_env({"DIBS_URL=" + url}, run);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("summary: completed=3 failed=0"));
  check_no_secret(out);
  CHECK(api.requests() >= 6);
  api.stop();
  fs::remove_all(dir);
}

TEST_CASE("cli: a source value over --max-source-bytes fails its item with the reason, and the run goes on", "[cli][limits]") {
  const auto dir = hostile_scratch("long-value");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto in = dir / "in.jsonl";
  {
    std::ofstream f(in);
    f << "{\"_id\":1,\"originatingIp\":\"8.8.8.8\"}\n";
    f << "{\"_id\":2,\"originatingIp\":\"" << std::string(1 << 20, '7') << "\"}\n";  // 1 MiB: once a 1 MiB GET
    f << "{\"_id\":3,\"originatingIp\":\"1.1.1.1\"}\n";
  }
  const auto [rc, out] = test::run_dibs({"enrich", "--store", "jsonl:" + in.string(), "--out", (dir / "out.jsonl").string(),
                                         "--url", api.base_url() + "/json/{originatingIp}", "--no-progress",
                                         "--no-preflight", "--max-attempts", "1", "--api-down-after", "0",
                                         "--request-timeout", "10s"});  // bounded, should the value be sent
  INFO(out.substr(0, 4000));
  CHECK(rc == 1);  // an item failed; the run itself did not
  CHECK_THAT(out, Catch::Contains("summary: completed=2 failed=1"));
  CHECK_THAT(out, Catch::Contains("source field 'originatingIp' is 1048576 bytes long, more than the 2048"));
  CHECK(api.requests() == 2);  // the long value was never sent
  const auto written = slurp(dir / "out.jsonl");
  CHECK_THAT(written, Catch::Contains("more than the 2048 a value may have"));
  api.stop();
  fs::remove_all(dir);
}

TEST_CASE("cli: --summary-json refuses a symbolic link planted at its path, and writes a private file", "[cli][secrets]") {
  const auto dir = hostile_scratch("summary-link");
  const auto target = dir / "victim.txt";
  std::ofstream(target) << "precious\n";
  const auto link = dir / "summary.json";
  fs::create_symlink(target, link);
  auto [rc, out] = test::run_dibs({"demo", "--docs", "20", "--no-progress", "--summary-json", link.string()});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("symbolic link") && Catch::Contains("--summary-json"));
  CHECK(slurp(target) == "precious\n");  // never written through the link
  CHECK_THAT(out, !Catch::Contains("summary: completed="));  // refused before the run
  // A plain path: written, readable by its owner only.
  const auto file = dir / "plain.json";
  std::tie(rc, out) = test::run_dibs({"demo", "--docs", "20", "--no-progress", "--summary-json", file.string()});
  CHECK(rc == 0);
  CHECK_THAT(slurp(file), Catch::StartsWith("{"));
  CHECK((fs::status(file).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  fs::remove_all(dir);
}
