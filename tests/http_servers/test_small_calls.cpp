// Every paid call counted, none wasted: `dibs enrich` against Python's http.server
// (tests/servers/small_api.py) where an API's answers cost calls: items that always get a 500
// spend their attempts on their own answers (no more calls than --max-attempts and two), the
// breaker's probes never send again a request the API answered; a body the API rejects (400)
// for the pre-flight's items stops the run before any row is claimed; a server whose listen
// backlog overflows never gets one request twice, nor a slow one on a network stack that keeps
// no count of acknowledged bytes.
#include "http_servers/small_api.hpp"

#include "support/api_items.hpp"
#include "support/process.hpp"
#include "support/raw_http.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace dibs::test;

namespace {
// GET /asked: how many keys were asked, and each asked more than once with how many times.
std::map<std::string, int> asked_again(std::uint16_t port) {
  const auto body = raw_http(port, "GET", "/asked").body;
  std::map<std::string, int> again;
  const std::regex entry("\"([^\"]+)\": (\\d+)");
  const auto from = body.find("\"again\"");
  if (from == std::string::npos) return again;
  const auto tail = body.substr(from + 8);
  for (std::sregex_iterator it(tail.begin(), tail.end(), entry), end; it != end; ++it) again[(*it)[1]] = std::stoi((*it)[2]);
  return again;
}
}  // namespace

TEST_CASE("items that always get a 500 spend their attempts on their own answers: --max-attempts 3 is at most 5 calls each",
          "[small][attempts]") {
  // Half the keys get a 500 every time; the others are answered. Before: the breaker took the
  // 500s gathered at the run's end for an outage, their attempts were not spent while calls went
  // on (9 calls each for --max-attempts 3), and its probes sent again requests it had answered.
  small_api api("keepalive", {"--fail-share", "0.5"});
  const auto dir = scratch_dir("dibs-calls", "always-500");
  write_items(dir / "in.jsonl", 40);
  const auto [rc, out] = enrich_lines(dir, api.base_url() + "/json/{ip}",
                                      {"--max-attempts", "3", "--backoff-base", "20ms", "--backoff-max", "100ms"});
  INFO(out);
  CHECK(rc == 1);
  const auto port = static_cast<std::uint16_t>(api.port());
  const auto again = asked_again(port);
  const auto output = slurp(dir / "out.jsonl");
  int failing = 0;
  for (const auto& [key, times] : again) {
    INFO(key << " asked " << times << " times");
    CHECK(times <= 5);  // 3 attempts, and one free answer as a waiter and one as a probe
    // Asked again: a key the API failed, never one it answered (its line is done).
    CHECK(output.find("\"query\":\"" + key + "\"") == std::string::npos);
    ++failing;
  }
  CHECK(failing > 0);
  const std::regex summary("summary: completed=(\\d+) failed=(\\d+)");
  std::smatch m;
  REQUIRE(std::regex_search(out, m, summary));
  CHECK(std::stoi(m[1]) + std::stoi(m[2]) == 40);
  CHECK(stat_of(port, "requests") <= std::stoi(m[1]) + 5 * std::stoi(m[2]));
}

TEST_CASE("a body the API rejects (400) for the pre-flight's items stops the run before a row is claimed", "[small][preflight]") {
  small_api api("keepalive");
  const auto dir = scratch_dir("dibs-calls", "preflight-400");
  write_items(dir / "in.jsonl", 200);
  const auto [rc, out] = enrich_lines(dir, api.base_url() + "/json", {"--body", R"({"address": {ip}})"});
  INFO(out);
  CHECK(rc == 2);
  CHECK_THAT(out, Catch::Contains("HTTP 400 Bad Request: expected a JSON object with an ip string") &&
                      Catch::Contains("the API rejects the request as the run builds it"));
  // Three pending items asked (one 400 may be about its own item), none of the 200 rows after.
  CHECK(stat_of(static_cast<std::uint16_t>(api.port()), "requests") <= 3);
  CHECK_FALSE(std::filesystem::exists(dir / "out.jsonl"));
}

TEST_CASE("a server whose listen backlog overflows never gets one request twice", "[small][backlog]") {
  // A backlog of 1 and 20 ms before each accept: Linux drops the handshake's last ACK of a burst
  // of connects, and the client believes it is connected. A request abandoned there was sent
  // again on another connection while the kernel still delivered the first once the server took
  // its connection late: two items were asked twice (5 and 13 s later) in a run.
  small_api api("close", {"--backlog", "1", "--accept-delay-ms", "20"});
  const auto dir = scratch_dir("dibs-calls", "backlog");
  write_items(dir / "in.jsonl", 300);
  const auto [rc, out] = enrich_lines(dir, api.base_url() + "/json/{ip}");
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("summary: completed=300 failed=0"));
  CHECK(asked_again(static_cast<std::uint16_t>(api.port())).empty());
}

#ifdef DIBS_TCP_INFO_WITHOUT_ACKED
TEST_CASE("on a network stack that keeps no count of acknowledged bytes, a slow first answer is waited for, each item asked once",
          "[small][backlog]") {
  // gVisor's netstack fills TCP_INFO with tcpi_bytes_acked at 0. Read as "the server's kernel
  // acknowledged nothing", every first answer slower than a new connection's check (200 ms before
  // any answer) was taken for a handshake the server's full backlog dropped, and its request sent
  // again on another connection, four times, then failed: the pre-flight reached the server four
  // times and the run stopped.
  small_api api("keepalive", {"--latency-ms", "600"});
  const auto dir = scratch_dir("dibs-calls", "no-acked-count");
  write_items(dir / "in.jsonl", 5);
  child_process p({"timeout", "--kill-after=10", "120", "env", std::string("LD_PRELOAD=") + DIBS_TCP_INFO_WITHOUT_ACKED,
                   dibs_binary(), "enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/json/{ip}", "--no-progress"},
                  /*merge_stderr=*/true);
  std::string out;
  const int rc = p.finish(out);
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("summary: completed=5 failed=0"));
  CHECK(asked_again(static_cast<std::uint16_t>(api.port())).empty());
}
#endif
