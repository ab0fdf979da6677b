// The API flags as the command line gives them: what they refuse, and the TLS check `enrich`
// runs before it starts.
#include "support/test_pki.hpp"

#include "apps/dibs/api_flags.hpp"
#include <dibs/ipapi/ipapi_stub.hpp>

#include <CLI/CLI.hpp>
#include <catch2/catch.hpp>

using namespace dibs;

namespace {
// Parses `args` the way `dibs enrich` would, then builds the processor factory.
processor_factory factory_from(std::vector<std::string> args) {
  CLI::App app;
  cli::api_flags f;
  f.add_to(app, true);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  return f.factory("originatingIp");
}
}  // namespace

TEST_CASE("API flags: bad combinations are refused with the flag's name", "[cli]") {
  CHECK(factory_from({"--url", "http://127.0.0.1:1/json/{originatingIp}"}));
  CHECK(factory_from({"--batch-url", "http://127.0.0.1:1/batch", "--batch-size", "100"}));
  CHECK_THROWS_WITH(factory_from({}), Catch::Contains("give --url"));
  CHECK_THROWS_AS(factory_from({"--url", "http://h/{a}", "--batch-url", "http://h/batch"}), CLI::ExcludesError);
  CHECK_THROWS_WITH(factory_from({"--batch-url", "http://h/batch/{originatingIp}"}),
                    Catch::Contains("--batch-url") && Catch::Contains("may not contain {fields}"));
  CHECK_THROWS_WITH(factory_from({"--batch-url", "ftp://h/batch"}), Catch::Contains("bad --batch-url"));
  CHECK_THROWS_AS(factory_from({"--batch-url", "http://h/batch", "--batch-size", "0"}), CLI::ValidationError);
  // ip-api's batch is the template [{source}] answered in order, each answer naming its key in
  // "query": a pointer or an echo of the user's own goes with a template of the user's own.
  CHECK(factory_from({"--batch-url", "http://h/batch", "--batch-body", "[{originatingIp}]", "--batch-echo", "query"}));
  CHECK_THROWS_WITH(factory_from({"--batch-url", "http://h/batch", "--batch-echo", "query"}),
                    Catch::Contains("--batch-echo goes with --batch-body"));
  CHECK_THROWS_WITH(factory_from({"--batch-url", "http://h/batch", "--batch-item", "/data/{i}"}),
                    Catch::Contains("--batch-item goes with --batch-body"));
  CHECK_THROWS_WITH(factory_from({"--url", "http://h/{a}", "--backoff-base", "2s", "--backoff-max", "1s"}),
                    Catch::Contains("--backoff-max"));
  CHECK_THROWS_WITH(factory_from({"--url", "http://h/{a}", "--request-timeout", "soon"}),
                    Catch::Contains("--request-timeout"));
  CHECK_THROWS_WITH(factory_from({"--url", "https://h/{a}", "--ca-file", "/nonexistent/ca.pem"}),
                    Catch::Contains("--ca-file '/nonexistent/ca.pem': cannot be read"));
  CHECK_THROWS_WITH(factory_from({"--url", "https://h/{a}", "--ca-file", "/nonexistent/ca.pem", "--insecure"}),
                    Catch::Contains("contradict"));
  CHECK_THROWS_WITH(factory_from({"--url", "http://h/{a}", "--rate", "fast"}), Catch::Contains("--rate 'fast'"));
}

TEST_CASE("the TLS check before a run: a refused certificate stops it, an unreachable API does not", "[cli][tls]") {
  auto pki = test::make_test_pki("localhost");
  stub::ipapi_stub api(stub::stub_options::loopback_tls(pki.server_cert, pki.server_key));
  api.start();
  cli::api_flags f;
  f.url = api.base_url() + "/json/{originatingIp}";
  CHECK_THAT(f.check_tls(), Catch::StartsWith("tls handshake with localhost: certificate verify failed"));
  f.ca_file = pki.ca_cert;
  CHECK(f.check_tls().empty());
  f.url = "https://127.0.0.1:" + std::to_string(api.port()) + "/json/{originatingIp}";
  CHECK_THAT(f.check_tls(), Catch::Contains("mismatch"));
  f.ca_file.clear();
  f.insecure = true;
  CHECK(f.check_tls().empty());
  api.stop();
  f.insecure = false;
  CHECK(f.check_tls().empty());  // nobody listens now: that is retried during the run, not fatal
  f.url = "http://127.0.0.1:1/json/{originatingIp}";
  CHECK(f.check_tls().empty());
}

TEST_CASE("API flags: --idle-timeout and --max-retry-after", "[cli]") {
  CHECK(factory_from({"--url", "http://h/{a}", "--idle-timeout", "1500ms", "--max-retry-after", "10m"}));
  CHECK(factory_from({"--url", "http://h/{a}", "--idle-timeout", "0"}));  // no reuse at all
  CHECK_THROWS_WITH(factory_from({"--url", "http://h/{a}", "--idle-timeout", "a while"}), Catch::Contains("--idle-timeout"));
  CHECK_THROWS_WITH(factory_from({"--url", "http://h/{a}", "--max-retry-after", "0s"}),
                    Catch::Contains("--max-retry-after must be more than 0"));
}
