// A MongoDB that does not answer, as a user meets it: dibs says so within the 5 s server
// selection timeout it sets (the URI not choosing another), in one error line, and a password
// holding an unencoded '@' shows up nowhere, not even in the driver's own messages.
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

namespace {
std::size_t error_lines(const std::string& out) {
  std::size_t n = 0;
  for (auto at = out.find("dibs: error: "); at != std::string::npos; at = out.find("dibs: error: ", at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("a dead MongoDB is told in one line within the server selection timeout, the password with '@' never shown",
          "[cli][secrets][mongo-unreachable]") {
  // Port 1: nothing listens. The password is Pw0rd@S3cr3t, its '@' not percent-encoded.
  const std::string uri = "mongodb://app:Pw0rd@S3cr3t@127.0.0.1:1/dibs?collection=jobs";
  for (const char* command : {"status", "enrich", "seed", "init"}) {
    DYNAMIC_SECTION(command) {
      std::vector<std::string> argv{dibs::test::dibs_binary(), command, "--store", uri, "--log-level", "debug"};
      if (std::string(command) == "enrich") argv.insert(argv.end(), {"--url", "http://127.0.0.1:1/{originatingIp}"});
      const auto started = std::chrono::steady_clock::now();
      dibs::test::child_process p(argv, /*merge_stderr=*/true);
      std::string out;
      const int rc = p.finish(out);
      const auto took = std::chrono::steady_clock::now() - started;
      INFO(out);
      CHECK(rc == 2);
      // One 5 s server selection (not one per handshake command: that was 10 s), with a margin.
      CHECK(took < std::chrono::seconds(9));
      CHECK(error_lines(out) == 1);
      CHECK_THAT(out, Catch::Contains("MongoDB"));
      CHECK(out.find("Pw0rd") == std::string::npos);
      CHECK(out.find("S3cr3t") == std::string::npos);
      CHECK(out.find("3cr3") == std::string::npos);
    }
  }
}
