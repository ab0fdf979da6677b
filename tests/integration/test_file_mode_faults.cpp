// `dibs enrich --store jsonl:IN --out OUT` on a bad day, end to end through the binary: an API
// that pretty-prints its JSON (Python's http.server serving files), and a full disk (the
// kernel's file size limit, RLIMIT_FSIZE through prlimit, which fails writes as ENOSPC does).
#include "support/text.hpp"
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace dibs;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
struct scratch_dir {
  explicit scratch_dir(const std::string& name)
      : path(fs::temp_directory_path() / ("dibs-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~scratch_dir() { fs::remove_all(path); }
  fs::path path;
};

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using test::lines_of;

// A loopback port nothing listens on now (bound and released: the server started next takes it).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool accepts_connections(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

std::vector<std::string> seeded_ips(const std::string& in, std::size_t lines) {
  std::string text;
  test::child_process seed({dibs::test::dibs_binary(), "seed", "--store", "jsonl:" + in, "--docs", std::to_string(lines)});
  REQUIRE(seed.finish(text) == 0);
  std::vector<std::string> ips;
  simdjson::dom::parser p;
  for (const auto& line : lines_of(read_whole(in))) {
    std::string_view ip;
    REQUIRE_FALSE(p.parse(line)["originatingIp"].get_string().get(ip));
    ips.emplace_back(ip);
  }
  REQUIRE(ips.size() == lines);
  return ips;
}

// OUT holds every input line once, in order, each with the answer for its own address.
void check_output(const std::vector<std::string>& ips, const fs::path& out) {
  const auto lines = lines_of(read_whole(out));
  REQUIRE(lines.size() == ips.size());
  simdjson::dom::parser p;
  for (std::size_t i = 0; i < ips.size(); ++i) {
    INFO("output line " << i + 1 << ": " << lines[i]);
    simdjson::dom::element doc;
    REQUIRE_FALSE(p.parse(lines[i]).get(doc));
    std::string_view ip, query;
    REQUIRE_FALSE(doc["originatingIp"].get_string().get(ip));
    CHECK(ip == ips[i]);
    REQUIRE_FALSE(doc["location"]["query"].get_string().get(query));
    CHECK(query == ips[i]);
  }
}
}  // namespace

TEST_CASE("file mode: an API that pretty-prints its JSON (newlines, tabs, unicode escapes) is journaled and written intact",
          "[jsonl][e2e]") {
  scratch_dir dir("pretty-api");
  const auto in = (dir.path / "in.jsonl").string(), out = (dir.path / "out.jsonl").string();
  const auto ips = seeded_ips(in, 50);
  const auto www = dir.path / "www";
  fs::create_directories(www);
  for (const auto& ip : ips)  // what a pretty-printing API answers for each address
    std::ofstream(www / (ip + ".json"), std::ios::binary)
        << "{\n  \"status\": \"success\",\n\t\"query\": \"" << ip
        << "\",\n  \"note\": \"two\\nlines\\tand \\u00fc\",\n  \"nested\": {\n    \"n\": [ 1,\n 2.50 ]\n  }\n}\n";

  const auto port = free_port();
  test::child_process server({"python3", "-m", "http.server", std::to_string(port), "--bind", "127.0.0.1",
                              "--directory", www.string()},
                             false, (dir.path / "server.log").string());
  for (int i = 0; i < 2000 && !accepts_connections(port); ++i) {
    REQUIRE(server.running());
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(accepts_connections(port));

  std::string text;
  test::child_process run({dibs::test::dibs_binary(), "enrich", "--store", "jsonl:" + in, "--out", out, "--url",
                           "http://127.0.0.1:" + std::to_string(port) + "/{originatingIp}.json", "--concurrency", "4",
                           "--no-progress"},
                          true);
  const int rc = run.finish(text);
  INFO(text);
  REQUIRE(rc == 0);
  check_output(ips, out);
  simdjson::dom::parser p;
  std::string_view note;
  double second = 0;
  for (const auto& line : lines_of(read_whole(out))) {
    auto doc = p.parse(line);
    REQUIRE_FALSE(doc["location"]["note"].get_string().get(note));
    CHECK(note == "two\nlines\tand \xc3\xbc");
    REQUIRE_FALSE(doc["location"]["nested"]["n"].at(1).get_double().get(second));
    CHECK(second == 2.5);
  }
  CHECK_FALSE(fs::exists(out + ".journal"));
  server.signal(SIGTERM);
  server.finish(text);
}

TEST_CASE("file mode on a full disk: the outcomes wait in memory, the journal stays whole, every line ends up once in OUT",
          "[jsonl][e2e]") {
  scratch_dir dir("full-disk");
  const auto in = (dir.path / "in.jsonl").string(), out = (dir.path / "out.jsonl").string();
  const auto journal = dir.path / "out.jsonl.journal";
  const auto ips = seeded_ips(in, 300);
  stub::ipapi_stub api(stub::stub_options::loopback(2ms));
  api.start();
  const std::vector<std::string> command{dibs::test::dibs_binary(), "enrich", "--store", "jsonl:" + in, "--out", out, "--url",
                                         api.base_url() + "/json/{originatingIp}", "--concurrency", "8",
                                         "--claim-batch", "10", "--no-progress"};  // small batches: some fit

  // Every file dibs writes may grow to 16 KiB (the soft limit; the hard one stays, so it can be
  // lifted again): the journal fills up after a few dozen records. dibs ignores SIGXFSZ, so the
  // write fails with EFBIG, as it would with ENOSPC, instead of killing it.
  const auto log = dir.path / "first.log";
  std::vector<std::string> limited{"prlimit", "--fsize=16384:unlimited", "--"};
  limited.insert(limited.end(), command.begin(), command.end());
  test::child_process first(limited, false, log.string());
  auto said_full = [&] { return read_whole(log).find("cannot write the journal") != std::string::npos; };
  for (int i = 0; i < 6000 && first.running() && !said_full(); ++i) std::this_thread::sleep_for(10ms);
  {
    INFO(read_whole(log));
    REQUIRE(first.running());  // not killed by SIGXFSZ, not given up
    CHECK_THAT(read_whole(log), Catch::Contains("cannot write the journal " + journal.string() + ": File too large") &&
                                   Catch::Contains("outcome(s) wait in memory and will be written when it can be"));
  }
  auto wait_for_exit = [&] {
    for (int i = 0; i < 6000 && first.running(); ++i) std::this_thread::sleep_for(10ms);
    const bool ended = !first.running();
    first.signal(SIGKILL);
    return ended;
  };
  std::string text;

  SECTION("room again: the same run writes what waited, and no line was asked twice") {
    std::string said;
    test::child_process lift({"prlimit", "--pid", std::to_string(first.pid()), "--fsize=unlimited"}, true);
    REQUIRE(lift.finish(said) == 0);
    REQUIRE(wait_for_exit());
    const int rc = first.finish(text);
    INFO(text << read_whole(log));
    CHECK(rc == 0);
    CHECK_THAT(text, Catch::Contains("300 lines (300 done, 0 failed)"));
    check_output(ips, out);
    CHECK(api.requests() == ips.size());  // once each: the pre-flight's answer is its line's own
    CHECK_FALSE(fs::exists(journal));
  }

  SECTION("stopped while the disk is full: the journal holds whole records, a rerun finishes every line once") {
    first.signal(SIGTERM);
    REQUIRE(wait_for_exit());
    const int rc = first.finish(text);
    INFO(text << read_whole(log));
    CHECK(rc == 143);  // stopped by SIGTERM, gracefully: 128 + 15, as a shell reports it
    CHECK_FALSE(fs::exists(out));
    const auto kept = read_whole(journal);
    REQUIRE_FALSE(kept.empty());
    CHECK(kept.back() == '\n');
    CHECK(kept.size() <= 16384);
    simdjson::dom::parser p;
    const auto records = lines_of(kept);
    for (const auto& line : records) {
      simdjson::dom::element rec;
      CHECK_FALSE(p.parse(line).get(rec));
    }
    REQUIRE(records.size() > 1);               // some outcomes landed before the disk was full
    REQUIRE(records.size() - 1 < ips.size());  // and not all

    test::child_process second(command, true);
    text.clear();
    const int rc2 = second.finish(text);
    INFO(text);
    REQUIRE(rc2 == 0);
    CHECK_THAT(text, Catch::Contains("300 lines (300 done, 0 failed)"));
    check_output(ips, out);
    CHECK_FALSE(fs::exists(journal));
  }
}
