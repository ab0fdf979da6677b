// `dibs enrich --store jsonl:IN --out OUT` as users run it: killed with SIGKILL in the middle and
// run again, it redoes no line the journal holds and loses none.
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

using namespace dibs;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
std::size_t count_lines(const fs::path& p) {  // complete lines only
  std::ifstream in(p, std::ios::binary);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line) && !in.eof();) ++n;
  return n;
}
}  // namespace

TEST_CASE("file mode: a run killed with SIGKILL resumes without redoing or losing a line", "[jsonl][e2e]") {
  const fs::path dir = fs::temp_directory_path() / ("dibs-file-mode-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto in = (dir / "in.jsonl").string(), out = (dir / "out.jsonl").string();
  const auto journal = dir / "out.jsonl.journal";
  constexpr std::size_t lines = 3000;
  std::string text;
  test::child_process seed({dibs::test::dibs_binary(), "seed", "--store", "jsonl:" + in, "--docs", std::to_string(lines)});
  REQUIRE(seed.finish(text) == 0);

  stub::ipapi_stub api(stub::stub_options::loopback(5ms));  // 5 at a time: about 1,000 lines/s, the kill lands mid-run
  api.start();
  const std::vector<std::string> command{dibs::test::dibs_binary(), "enrich", "--store", "jsonl:" + in, "--out", out, "--url",
                                         api.base_url() + "/json/{originatingIp}", "--concurrency", "5", "--no-progress"};
  {
    test::child_process first(command, true);
    // Until a good part is journaled (a state of the file, not a time), then no goodbye at all.
    for (int i = 0; i < 4000 && count_lines(journal) < 1 + lines / 3; ++i) std::this_thread::sleep_for(5ms);
    first.signal(SIGKILL);
    first.finish(text);
  }
  const std::size_t journaled = count_lines(journal) - 1;  // without the header
  REQUIRE(journaled >= lines / 3);
  REQUIRE(journaled < lines);
  CHECK_FALSE(fs::exists(out));

  // Requests the killed process sent are answered (and counted) before its connections close.
  REQUIRE(test::eventually([&] { return api.open_connections() == 0; }));
  const auto served_before = api.requests();
  test::child_process second(command, true);
  const int rc = second.finish(text);
  INFO(text);
  CHECK(rc == 0);
  // Nothing journaled was asked again, nothing asked twice (the pre-flight's answer is its line's).
  CHECK(api.requests() - served_before == lines - journaled);
  CHECK_FALSE(fs::exists(journal));

  // Every input line once, in order, each with its own answer.
  std::ifstream input(in), output(out);
  simdjson::dom::parser p;
  std::size_t n = 0;
  for (std::string a, b; std::getline(input, a);) {
    REQUIRE(std::getline(output, b));
    ++n;
    std::string_view ip_in, ip_out, query;
    REQUIRE_FALSE(p.parse(a)["originatingIp"].get_string().get(ip_in));
    const std::string ip(ip_in);
    auto doc = p.parse(b);
    REQUIRE_FALSE(doc["originatingIp"].get_string().get(ip_out));
    CHECK(ip_out == ip);
    REQUIRE_FALSE(doc["location"]["query"].get_string().get(query));
    CHECK(query == ip);
  }
  CHECK(n == lines);
  std::string extra;
  CHECK_FALSE(std::getline(output, extra));
  fs::remove_all(dir);
}
