// The command line's input and output as a script meets them: help per command, stdout that
// carries data and nothing else (--summary-json -, jsonl:- with --out -), a busy port told in
// one line, --metrics-address, --password-file. The real `dibs` binary in every case.
#include "support/process.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

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
struct io_ran {
  int rc;
  std::string out;  // stdout (and stderr, when merged)
  std::string err;  // stderr, when not merged
};

fs::path io_scratch(const std::string& name) { return test::scratch_dir("dibs-cli-io", name); }
using test::slurp;

io_ran merged(std::vector<std::string> args) {
  args.insert(args.begin(), dibs::test::dibs_binary());
  test::child_process p(args, true);
  io_ran r{};
  r.rc = p.finish(r.out);
  return r;
}

// stdout and stderr apart; `shell_tail` is appended to the shell command (a redirection).
io_ran apart(const std::vector<std::string>& args, const fs::path& dir, const std::string& shell_tail = "") {
  std::string cmd = test::shell_quote(dibs::test::dibs_binary());
  for (const auto& a : args) cmd += " " + test::shell_quote(a);
  const auto err = dir / "stderr";
  cmd += " 2>" + test::shell_quote(err.string()) + " " + shell_tail;
  test::child_process p({"bash", "-c", cmd});
  io_ran r{};
  r.rc = p.finish(r.out);
  r.err = slurp(err);
  return r;
}
}  // namespace

TEST_CASE("dibs enrich --help names durations DURATION and shows examples", "[cli][help]") {
  const auto r = merged({"enrich", "--help"});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("--lease DURATION") && Catch::Contains("--concurrency N") &&
                        Catch::Contains("--store URI") && Catch::Contains("Examples:") &&
                        Catch::Contains("dibs enrich --store"));
  CHECK(r.out.find(" TEXT") == std::string::npos);
}

TEST_CASE("each command's help lists only its own flags", "[cli][help]") {
  const auto seed = merged({"seed", "--help"});
  INFO(seed.out);
  CHECK(seed.rc == 0);
  CHECK(seed.out.find("--url") == std::string::npos);
  CHECK(seed.out.find("--concurrency") == std::string::npos);
  CHECK_THAT(seed.out, Catch::Contains("--docs N") && Catch::Contains("Examples:"));
  const auto status = merged({"status", "--help"});
  INFO(status.out);
  CHECK(status.out.find("--concurrency") == std::string::npos);
  CHECK(status.out.find("--lease") == std::string::npos);
  CHECK(status.out.find("--url") == std::string::npos);
  CHECK_THAT(status.out, Catch::Contains("Examples:"));
  const auto stub = merged({"stub", "--help"});
  CHECK(stub.out.find("--store") == std::string::npos);
  CHECK_THAT(stub.out, Catch::Contains("--port PORT") && Catch::Contains("Examples:"));
}

TEST_CASE("dibs demo --summary-json - writes the summary JSON alone on stdout and the rest to stderr", "[cli][io]") {
  const auto dir = io_scratch("summary");
  const auto r = apart({"demo", "--docs", "40", "--concurrency", "4", "--no-progress", "--summary-json", "-"}, dir);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::StartsWith("{") && Catch::Contains("\"completed\":40") && Catch::EndsWith("}\n"));
  CHECK(r.out.find('\n') == r.out.size() - 1);
  CHECK_THAT(r.err, Catch::Contains("demo: 40 done") && Catch::Contains("summary: completed=40"));
  CHECK_FALSE(fs::exists("-"));
  fs::remove_all(dir);
}

TEST_CASE("dibs enrich --store jsonl:- --out - reads stdin and writes the enriched lines to stdout in order", "[cli][io][jsonl]") {
  const auto dir = io_scratch("pipe");
  stub::ipapi_stub api(stub::stub_options::loopback());
  api.start();
  const auto in = dir / "in.jsonl";
  {
    std::ofstream f(in);
    f << "{\"ip\":\"8.8.8.8\",\"n\":1}\n{\"ip\":\"10.0.0.1\",\"n\":2}\n\n{\"ip\":\"1.1.1.1\",\"n\":3}\n";
  }
  const auto r = apart({"enrich", "--store", "jsonl:-", "--out", "-", "--source", "ip", "--url",
                        api.base_url() + "/json/{ip}", "--no-progress"},
                       dir, "<" + test::shell_quote(in.string()));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.rc == 0);  // 10.0.0.1 is a private address: ip-api has no data for it, which is no failure
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  for (std::string l; std::getline(lines, l);) got.push_back(l);
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[0], Catch::Contains("\"n\":1") && Catch::Contains("\"location\":{") && Catch::Contains("8.8.8.8"));
  CHECK_THAT(got[1], Catch::Contains("\"n\":2") && Catch::Contains("\"location\":{\"status\":\"fail\""));
  CHECK_THAT(got[2], Catch::Contains("\"n\":3") && Catch::Contains("\"location\":{"));
  CHECK_THAT(r.err, Catch::Contains("wrote stdout: 3 lines") && Catch::Contains("summary: completed=2 failed=0") &&
                        Catch::Contains(" no_data=1"));
  api.stop();
  fs::remove_all(dir);
}

TEST_CASE("jsonl:- goes with --out - only and --out - with jsonl:- only", "[cli][io][jsonl]") {
  auto r = merged({"enrich", "--store", "jsonl:-", "--out", "/tmp/x.jsonl", "--url", "http://127.0.0.1:1/{ip}"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error: --out") && Catch::Contains("give --out -"));
  r = merged({"enrich", "--store", "jsonl:/tmp/in.jsonl", "--out", "-", "--url", "http://127.0.0.1:1/{ip}"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error: --out '-'"));
  r = merged({"enrich", "--store", "jsonl:-", "--out", "-", "--summary-json", "-", "--url", "http://127.0.0.1:1/{ip}"});
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("both write to stdout"));
}

TEST_CASE("dibs stub on a busy port says so in one line and exits 2", "[cli][stub]") {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor busy(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = std::to_string(busy.local_endpoint().port());
  const auto r = merged({"stub", "--port", port});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK(r.out == "dibs: error: port " + port + " is in use (--port)\n");
}

TEST_CASE("dibs demo --metrics-address: a bad one is a usage error naming the flag and 0.0.0.0 serves", "[cli][metrics]") {
  auto r = merged({"demo", "--docs", "5", "--no-progress", "--metrics-port", "0", "--metrics-address", "not-an-ip"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error:") && Catch::Contains("--metrics-address"));
  r = merged({"demo", "--docs", "5", "--no-progress", "--metrics-port", "0", "--metrics-address", "0.0.0.0"});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("metrics and controls on http://0.0.0.0:"));
}

TEST_CASE("dibs status --password-file is for databases: a file store refuses it by the flag's name", "[cli][password]") {
  const auto dir = io_scratch("pw");
  std::ofstream(dir / "pw") << "secret-in-file\n";
  std::ofstream(dir / "in.jsonl") << "{\"originatingIp\":\"8.8.8.8\"}\n";
  const auto r = merged({"status", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--password-file",
                         (dir / "pw").string()});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error: --password-file is for a database"));
  CHECK(r.out.find("secret-in-file") == std::string::npos);
  fs::remove_all(dir);
}
