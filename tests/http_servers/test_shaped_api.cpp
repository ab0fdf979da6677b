// `dibs enrich` against an API of the shapes paid APIs have (tests/servers/shaped_api.py, Python's
// http.server): a key in a header that no output shows, POST bodies built from fields checked byte
// for byte where they arrive, answers that mean "no data", quota headers honoured before the 429,
// a run's call cap, and a dry run that writes nothing.
#include "http_servers/shaped_api.hpp"

#include "support/api_items.hpp"
#include "support/eventually.hpp"
#include "support/process.hpp"
#include "support/raw_http.hpp"
#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <regex>

using namespace dibs::test;
namespace fs = std::filesystem;

namespace {
std::size_t count_lines_with(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++n;
  return n;
}

}  // namespace

TEST_CASE("a key in a header reaches the API and no output shows it: logs, errors, /status, /metrics, the dashboard, "
          "the summary, a dry run, --help",
          "[shaped][secrets]") {
  const std::string file_key = "FileKey-7f3a9c1e", env_key = "EnvKey-52bd0e44", literal_key = "LiteralKey-0c9d8e7f";
  shaped_api api({"--key", "X-Api-Key:" + file_key});
  const auto dir = scratch_dir("dibs-shaped", "secrets");
  write_file(dir / "key", file_key + "\n");
  ::chmod((dir / "key").c_str(), 0600);
  write_items(dir / "in.jsonl", 150);
  // One item whose header would carry a line break: it fails alone, with a reason that names no key.
  {
    std::ofstream more(dir / "in.jsonl", std::ios::app);
    more << "{\"ip\":\"10.9.9.9\",\"who\":\"evil\\r\\nX-Injected: 1\"}\n";
  }
  const std::vector<std::string> headers = {"--header", "X-Api-Key: {file:" + (dir / "key").string() + "}",
                                            "--header", "Authorization: Bearer {env:SHAPED_TOKEN}",
                                            "--header", "X-Literal: " + literal_key,
                                            "--header", "X-Who: {who}"};
  std::vector<std::string> argv = {"env", "SHAPED_TOKEN=" + env_key, dibs_binary(), "--log-level", "debug", "enrich",
                                   "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out", (dir / "out.jsonl").string(),
                                   "--url", api.base_url() + "/geo/{ip}", "--rate", "40/s", "--no-progress",
                                   "--metrics-port", "0", "--summary-json", (dir / "summary.json").string()};
  argv.insert(argv.end(), headers.begin(), headers.end());
  const auto log_path = (dir / "run.log").string();
  child_process run(argv, false, log_path);
  // While it runs (--rate 40/s: about 4 s): the controls' pages, read as an operator does.
  std::smatch m;
  const std::regex listening(R"(controls on http://127\.0\.0\.1:(\d+))");
  std::string log;
  REQUIRE(eventually([&] {
    log = slurp(log_path);
    return std::regex_search(log, m, listening) || !run.running();
  }));
  REQUIRE(!m.empty());
  const auto port = static_cast<std::uint16_t>(std::stoi(m[1].str()));
  REQUIRE(eventually([&] { return api.requests().size() >= 20; }));
  const std::string pages = raw_http(port, "GET", "/status").body + raw_http(port, "GET", "/metrics").body +
                            raw_http(port, "GET", "/").body + raw_http(port, "GET", "/workers").body;
  std::string out;
  const int rc = run.finish(out);
  out += slurp(log_path) + slurp(dir / "summary.json") + slurp(dir / "out.jsonl");
  INFO(out);
  CHECK(rc == 1);  // the one item with a line break in its header failed; the rest are done
  CHECK_THAT(out, Catch::Contains("header X-Who") && Catch::Contains("control byte"));
  CHECK_THAT(out, Catch::Contains("summary: completed=150 failed=1"));
  CHECK_THAT(pages, Catch::Contains("\"completed\""));  // the pages were read
  // The dry run shows the requests, the help its flags; an API refusing a wrong key says why.
  ::setenv("SHAPED_TOKEN", env_key.c_str(), 1);
  const auto dry = run_dibs([&] {
    auto a = std::vector<std::string>{"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                      (dir / "dry.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--dry-run", "3"};
    a.insert(a.end(), headers.begin(), headers.end());
    return a;
  }());
  const auto help = run_dibs({"enrich", "--help"});
  const auto refused = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out", (dir / "x.jsonl").string(),
                                 "--url", api.base_url() + "/geo/{ip}", "--header", "X-Api-Key: " + literal_key});
  ::unsetenv("SHAPED_TOKEN");
  INFO(dry.second);
  CHECK(dry.first == 0);
  CHECK_THAT(dry.second, Catch::Contains("X-Api-Key: [redacted]") && Catch::Contains("dry run: 3 items, 3 calls"));
  CHECK(refused.first == 2);
  CHECK_THAT(refused.second, Catch::Contains("401"));
  const std::string everything = out + pages + dry.second + help.second + refused.second;
  for (const auto& key : {file_key, env_key, literal_key}) {
    INFO("key " << key);
    CHECK(everything.find(key) == std::string::npos);
  }
  // ... and every request the run sent carried them.
  const auto got = api.requests();
  REQUIRE(got.size() >= 150);
  std::size_t keyed = 0;
  for (const auto& r : got)
    keyed += r.header("X-Api-Key") == file_key && r.header("Authorization") == "Bearer " + env_key &&
             r.header("X-Literal") == literal_key;
  CHECK(keyed + 1 >= got.size());  // all but the refused run's, whose key was the wrong one
  CHECK(count_lines_with(out, "X-Injected") <= 1);  // named in its line only, never sent
  for (const auto& r : got) CHECK(r.header("X-Injected").empty());
}

TEST_CASE("a POST body built from fields arrives byte for byte: quotes, backslashes, control bytes, non-ASCII, numbers, "
          "objects",
          "[shaped][body]") {
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "body");
  write_file(dir / "in.jsonl",
             "{\"ip\":\"1.2.3.4\",\"name\":\"He said \\\"hi\\\" \\\\ back\\n\",\"n\":42,\"x\":-1.5e3,\"geo\":{\"a\":[1,2],"
             "\"b\":\"c\"},\"ok\":true,\"city\":\"Z\xC3\xBCrich \xE6\x9D\xB1\xE4\xBA\xAC\\u0001\"}\n");
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--body",
                                   R"({"name": {name}, "n": {n}, "x": {x}, "geo": {geo}, "ok": {ok}, "city": {city}, "q": "ip={ip}"})",
                                   "--no-progress"});
  INFO(out);
  REQUIRE(rc == 0);
  const auto got = api.requests();
  REQUIRE(got.size() == 1);  // the pre-flight's, whose answer the run takes for its line
  const std::string expected =
      "{\"name\": \"He said \\\"hi\\\" \\\\ back\\n\", \"n\": 42, \"x\": -1.5e3, \"geo\": {\"a\":[1,2],\"b\":\"c\"}, "
      "\"ok\": true, \"city\": \"Z\xC3\xBCrich \xE6\x9D\xB1\xE4\xBA\xAC\\u0001\", \"q\": \"ip=1.2.3.4\"}";
  for (const auto& r : got) {
    CHECK(r.method == "POST");
    CHECK(r.body == expected);
    CHECK(r.header("Content-Type") == "application/json");
  }
  // The API parsed it as the item's own values.
  CHECK_THAT(slurp(dir / "out.jsonl"), Catch::Contains(R"("received":{"name":"He said \"hi\" \\ back\n","n":42)"));

  // A form, by PUT.
  const auto form = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                              (dir / "form.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--method", "PUT",
                              "--body", "who={name}&n={n}", "--no-preflight", "--no-progress"});
  REQUIRE(form.first == 0);
  const auto last = api.requests().back();
  CHECK(last.method == "PUT");
  CHECK(last.header("Content-Type") == "application/x-www-form-urlencoded");
  CHECK(last.body == "who=He%20said%20%22hi%22%20%5C%20back%0A&n=42");
}

TEST_CASE("answers that mean no data: a status (--no-data-on) and a member (--no-data-when)", "[shaped][no-data]") {
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "nodata");
  write_file(dir / "in.jsonl", "{\"ip\":\"1.1.1.1\"}\n{\"ip\":\"none-1\"}\n{\"ip\":\"fail-2\"}\n");
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--no-status-check",
                                   "--no-data-on", "404", "--no-data-when", "/status=fail", "--no-progress"});
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("summary: completed=1 failed=0") && Catch::Contains("no_data=2"));
  const auto written = slurp(dir / "out.jsonl");
  CHECK_THAT(written, Catch::Contains(R"({"ip":"none-1","location":{"error":"not found"}})"));
  CHECK_THAT(written, Catch::Contains(R"("location":{"status":"fail","message":"reserved range","query":"fail-2"})"));
}

TEST_CASE("a --map into a JSON Lines file: each value in a member of its own, typed, the target their object",
          "[shaped][map]") {
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "map");
  write_file(dir / "in.jsonl", "{\"ip\":\"1.1.1.1\",\"n\":1}\n");
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--map",
                                   "country=/country,lat=/loc/lat,loc=/loc,missing=/nope", "--no-progress"});
  INFO(out);
  CHECK(rc == 0);
  CHECK(slurp(dir / "out.jsonl") ==
        "{\"ip\":\"1.1.1.1\",\"n\":1,\"location\":{\"country\":\"Freedonia\",\"lat\":48.5,\"loc\":{\"lat\":48.5,\"lon\":-2.25},"
        "\"missing\":null},\"country\":\"Freedonia\",\"lat\":48.5,\"loc\":{\"lat\":48.5,\"lon\":-2.25},\"missing\":null}\n");
}

TEST_CASE("quota headers pace the run before the 429: 1,000 items against 100 a window, in each dialect",
          "[shaped][quota]") {
  for (const char* style : {"github", "ietf", "structured"}) {
    DYNAMIC_SECTION(style) {
      shaped_api api({"--quota", "100", "--window", "1", "--quota-style", style});
      const auto dir = scratch_dir("dibs-shaped", std::string("quota-") + style);
      write_items(dir / "in.jsonl", 1000);
      const auto [rc, out] = run_dibs_within(std::chrono::seconds(120),
                                             {"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                              (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}",
                                              "--no-progress"});
      INFO(out);
      CHECK(rc == 0);
      CHECK_THAT(out, Catch::Contains("summary: completed=1000 failed=0"));
      const int refused = stat_of(static_cast<std::uint16_t>(api.port()), "refused");
      const int requests = stat_of(static_cast<std::uint16_t>(api.port()), "requests");
      WARN(style << ": " << refused << " of " << requests << " requests answered 429");
      CHECK(requests >= 1000);
      CHECK(refused * 100 <= requests);  // at most 1%
    }
  }
}

TEST_CASE("a run with --max-calls: that many calls at most, then nothing claimed, one line, exit status 4", "[shaped][budget]") {
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "max-calls");
  write_items(dir / "in.jsonl", 300);
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--max-calls", "50",
                                   "--concurrency", "20", "--no-progress"});
  INFO(out);
  CHECK(rc == 4);
  CHECK(api.requests().size() == 50);  // the pre-flight's and 49 items'
  CHECK_THAT(out, Catch::Contains("--max-calls 50 spent: this process made 50 calls"));
  // Fifty items done for fifty calls: the pre-flight's answer is its item's (49 before).
  CHECK_THAT(out, Catch::Contains("summary: completed=50 failed=0"));
  CHECK_THAT(out, Catch::Contains("250 pending, 0 leased"));  // nothing else claimed, nothing held
}

TEST_CASE("a --dry-run 5: five calls, the requests and writes printed, nothing claimed or written", "[shaped][dry-run]") {
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "dry-run");
  write_items(dir / "in.jsonl", 20);
  const auto before = slurp(dir / "in.jsonl");
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--body",
                                   R"({"who": {who}})", "--dry-run", "5"});
  INFO(out);
  CHECK(rc == 0);
  CHECK(api.requests().size() == 5);
  CHECK(count_lines_with(out, "POST " + api.base_url() + "/geo/10.0.0.") == 5);
  CHECK(count_lines_with(out, "would write location = {\"query\":\"10.0.0.") == 5);
  CHECK_THAT(out, Catch::Contains(R"({"who": "user-4"})"));
  CHECK_THAT(out, Catch::Contains("dry run: 5 items, 5 calls to the API; nothing was claimed or written"));
  CHECK_FALSE(fs::exists(dir / "out.jsonl"));
  CHECK_FALSE(fs::exists(dir / "out.jsonl.journal"));
  CHECK(slurp(dir / "in.jsonl") == before);
}

TEST_CASE("a user's Content-Type, Accept or User-Agent replaces dibs's own: one of each reaches the API", "[shaped][headers]") {
  // Before, dibs's own were sent beside the user's: two Content-Type lines.
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "own-headers");
  write_items(dir / "in.jsonl", 3);
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--body",
                                   R"({"who": {who}})", "--header", "Content-Type: application/vnd.api+json", "--header",
                                   "accept: application/vnd.api+json", "--header", "User-Agent: my-enricher/2.1",
                                   "--no-progress"});
  INFO(out);
  CHECK(rc == 0);
  const auto requests = api.requests();
  REQUIRE(!requests.empty());
  for (const auto& r : requests) {
    std::map<std::string, int> count;
    for (const auto& [k, v] : r.headers) {
      std::string lower = k;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      ++count[lower];
    }
    CHECK(count["content-type"] == 1);
    CHECK(count["accept"] == 1);
    CHECK(count["user-agent"] == 1);
    CHECK(r.header("Content-Type") == "application/vnd.api+json");
    CHECK(r.header("Accept") == "application/vnd.api+json");
    CHECK(r.header("User-Agent") == "my-enricher/2.1");
  }
}

TEST_CASE("a run whose budget was spent and some items failed exits 1 (items failed), with the budget's line", "[shaped][budget]") {
  // Before: exit 4 (the budget) hid the failed items.
  shaped_api api;
  const auto dir = scratch_dir("dibs-shaped", "spent-and-failed");
  write_file(dir / "in.jsonl", "{\"ip\":\"none-1\"}\n{\"ip\":\"none-2\"}\n{\"ip\":\"1.1.1.1\"}\n{\"ip\":\"1.1.1.2\"}\n"
                               "{\"ip\":\"1.1.1.3\"}\n{\"ip\":\"1.1.1.4\"}\n{\"ip\":\"1.1.1.5\"}\n{\"ip\":\"1.1.1.6\"}\n");
  const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out",
                                   (dir / "out.jsonl").string(), "--url", api.base_url() + "/geo/{ip}", "--max-calls", "5",
                                   "--concurrency", "1", "--no-preflight", "--no-progress"});
  INFO(out);
  CHECK(rc == 1);
  CHECK_THAT(out, Catch::Contains("--max-calls 5 spent: this process made 5 calls"));
  CHECK_THAT(out, Catch::Contains("failed=2"));
}

TEST_CASE("a malformed --header is refused without echoing any of it (it may hold a key)", "[shaped][headers][secrets]") {
  for (const char* given : {"Authorization Bearer sk-live-9f8e7d: x", "sk-live-9f8e7d"}) {
    const auto [rc, out] = run_dibs({"enrich", "--store", "jsonl:/nonexistent.jsonl", "--out", "/tmp/x.jsonl", "--url",
                                     "http://127.0.0.1:1/geo/{ip}", "--header", given});
    INFO(out);
    CHECK(rc == 2);
    CHECK_THAT(out, Catch::Contains("--header takes 'Name: value'"));
    CHECK(out.find("sk-live-9f8e7d") == std::string::npos);
  }
}

TEST_CASE("an account whose credit is gone stops the run: its own exit code, the API's words, no item failed",
          "[shaped][account]") {
  // Past 10 requests, OpenAI's 429 insufficient_quota. Before: read as the API's pace (or, with
  // attempts spent on 429s, every item failing after its tries), the run went on asking.
  shaped_api api({"--spent-after", "10"});
  const auto dir = scratch_dir("dibs-shaped", "spent");
  write_items(dir / "in.jsonl", 300);
  const auto [rc, out] = enrich_lines(dir, api.base_url() + "/geo/{ip}", {}, std::chrono::seconds(60));
  INFO(out);
  CHECK(rc == 5);
  CHECK_THAT(out, Catch::Contains("the API says the account can make no more calls") &&
                      Catch::Contains("You exceeded your current quota"));
  CHECK_THAT(out, Catch::Contains(" failed=0 "));
  const auto requests = static_cast<int>(api.requests().size());
  CHECK(requests > 10);
  CHECK(requests <= 10 + 64);  // the calls in flight when it was said, and no more
}

TEST_CASE("an account out of credit at the pre-flight ends the command with its own exit code, its item given back",
          "[shaped][account]") {
  shaped_api api({"--spent-after", "0"});
  const auto dir = scratch_dir("dibs-shaped", "spent-at-start");
  write_items(dir / "in.jsonl", 20);
  const auto [rc, out] = enrich_lines(dir, api.base_url() + "/geo/{ip}", {}, std::chrono::seconds(60));
  INFO(out);
  CHECK(rc == 5);  // before: 2, "the API can't be used", as any start-up refusal
  CHECK_THAT(out, Catch::Contains("the API says the account can make no more calls (insufficient_quota)"));
  CHECK(api.requests().size() == 1);  // the pre-flight's one call, and no more
  // The item it claimed went back as it came: a run with credit asks every line.
  shaped_api paid;
  const auto [rc2, out2] = enrich_lines(dir, paid.base_url() + "/geo/{ip}", {}, std::chrono::seconds(60));
  INFO(out2);
  CHECK(rc2 == 0);
  CHECK_THAT(out2, Catch::Contains("summary: completed=20 failed=0"));
}
