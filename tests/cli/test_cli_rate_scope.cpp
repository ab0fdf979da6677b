// `--rate-scope` as a user meets it without a database: the usage errors, and a file store, which
// one process works on, keeping the process's own rate (and saying so).
#include "support/process.hpp"
#include "support/run_dibs.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using dibs::test::dibs_cli;

TEST_CASE("dibs enrich refuses --rate-scope store without --rate or --token-rate, and a scope it has not, naming the flag", "[cli][usage][shared-rate]") {
  auto r = dibs_cli({"enrich", "--store", "jsonl:x.jsonl", "--out", "y.jsonl", "--url", "http://127.0.0.1:1/json/{ip}",
                     "--rate-scope", "store"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::StartsWith("dibs: error: --rate-scope store shares --rate and --token-rate: give one of them too"));
  r = dibs_cli({"enrich", "--store", "jsonl:x.jsonl", "--out", "y.jsonl", "--url", "http://127.0.0.1:1/json/{ip}",
                "--rate", "1/s", "--rate-scope", "host"});
  INFO(r.out);
  CHECK(r.rc == 2);
  CHECK_THAT(r.out, Catch::Contains("--rate-scope"));
}

TEST_CASE("a JSON Lines file with --rate-scope store keeps the process's own rate, and says so", "[cli][shared-rate]") {
  dibs::stub::ipapi_stub api(dibs::stub::stub_options::loopback());
  api.start();
  const fs::path dir = fs::temp_directory_path() / ("dibs-rate-scope-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream in(dir / "in.jsonl");
    in << "{\"ip\":\"8.8.8.8\"}\n{\"ip\":\"1.1.1.1\"}\n";
  }
  const auto r = dibs_cli({"--log-level", "info", "enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out", (dir / "out.jsonl").string(),
                           "--url", api.base_url() + "/json/{ip}", "--rate", "100/s", "--rate-scope", "store", "--no-progress"});
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, Catch::Contains("--rate-scope store: a file is worked on by one process at a time: --rate 100/s is this process's"));
  CHECK(api.requests() == 2);  // both lines, once each (the pre-flight's answer is its line's)
  fs::remove_all(dir);
}
