// File mode keeps the user's data: a line whose target is set is done and passes through byte for
// byte; dibs's own bookkeeping lives under "_dibs", so a user field named "failed" is the user's;
// a line dibs writes keeps its members in order and every value it did not change as written.
#include <dibs/stores/jsonl_store.hpp>
#include <dibs/stores/line_keys.hpp>

#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace dibs;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
struct user_data_dir {
  explicit user_data_dir(const std::string& name) : dir(test::scratch_dir("dibs-user-data", name)) {}
  ~user_data_dir() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  fs::path dir;
};

std::string read_file(const std::string& path) { return test::slurp(path); }

jsonl::jsonl_options options_in(const user_data_dir& dir) {
  jsonl::jsonl_options o;
  o.in = dir.path("in.jsonl");
  o.out = dir.path("out.jsonl");
  o.source = "ip";
  o.target = "geo";
  return o;
}
}  // namespace

TEST_CASE("file mode: a set target is done and passes through, a user's 'failed' is the user's, order and bytes kept",
          "[jsonl][user-data]") {
  user_data_dir dir("case1");
  const std::string manual = R"({"id":"g","ip":"81.2.69.9","geo":{"country":"Atlantis","source":"manual"}})";
  const std::string spaced = R"({ "id": "a", "geo": null, "ip": "8.8.8.8",  "tags": [ 1, 2 ], "failed": false })";
  const std::string mine = R"({"id":"b","ip":"1.1.1.1","failed":"mine","n":1.50})";
  const std::string broken = R"({"id":"c","ip":"9.9.9.9","failed":{"by":"user"}})";
  const std::string crlf = "{\"id\":\"d\",\"ip\":\"4.4.4.4\"}\r";
  std::ofstream(dir.path("in.jsonl"), std::ios::binary)
      << manual << "\n" << spaced << "\n" << mine << "\n" << broken << "\n" << crlf << "\n";

  jsonl::jsonl_store s(options_in(dir));
  auto st = s.stats_blocking();
  CHECK(st.done == 1);  // the manual line: never claimed, never called
  CHECK(st.pending == 4);
  auto jobs = s.claim_blocking({10, "w1", 60s, 0ms});
  REQUIRE(jobs.size() == 4);
  CHECK(jobs[0].id == "2");
  CHECK(s.complete_blocking({completion{jobs[0].ref(), R"({"country":"US"})"},
                             completion{jobs[1].ref(), R"({"country":"AU"})"},
                             completion{jobs[3].ref(), R"({"country":"DE"})"}})
            .applied == 3);
  CHECK(s.fail_blocking({failure{jobs[2].ref(), "HTTP 404", 404, 1}}).applied == 1);
  CHECK_THAT(s.finish(true), Catch::Contains("5 lines (4 done, 1 failed)"));

  CHECK(read_file(dir.path("out.jsonl")) ==
        manual + "\n" +
        R"({ "id": "a", "geo": {"country":"US"}, "ip": "8.8.8.8",  "tags": [ 1, 2 ], "failed": false })" + "\n" +
        R"({"id":"b","ip":"1.1.1.1","failed":"mine","n":1.50,"geo":{"country":"AU"}})" + "\n" +
        R"({"id":"c","ip":"9.9.9.9","failed":{"by":"user"},"_dibs":{"failed":{"reason":"HTTP 404","httpStatus":404,"attempts":1}}})" +
        "\n" + "{\"id\":\"d\",\"ip\":\"4.4.4.4\",\"geo\":{\"country\":\"DE\"}}\r\n");

  // dibs status on the finished output: the user's "failed" members are not failures.
  jsonl::jsonl_options ro = options_in(dir);
  ro.read_only = true;
  jsonl::jsonl_store counted(ro);
  const auto after = counted.stats_blocking();
  CHECK(after.done == 4);
  CHECK(after.failed == 1);
  const auto reasons = counted.failure_reasons(5);
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].reason == "HTTP 404");
  CHECK(reasons[0].example_ids == std::vector<std::string>{"4"});
}

TEST_CASE("file mode: an earlier run's output as the input: failed lines are open again, their old _dibs replaced",
          "[jsonl][user-data]") {
  user_data_dir dir("case2");
  std::ofstream(dir.path("in.jsonl"), std::ios::binary)
      << R"({"ip":"1.1.1.1","_dibs":{"failed":{"reason":"timed out","httpStatus":0,"attempts":3}},"k":1})" << "\n"
      << R"({"ip":"2.2.2.2","_dibs":{"failed":{"reason":"timed out","httpStatus":0,"attempts":3}}})" << "\n";
  jsonl::jsonl_store s(options_in(dir));
  auto jobs = s.claim_blocking({10, "w1", 60s, 0ms});
  REQUIRE(jobs.size() == 2);
  CHECK(s.complete_blocking({completion{jobs[0].ref(), R"({"c":1})"}}).applied == 1);
  CHECK(s.fail_blocking({failure{jobs[1].ref(), "HTTP 500", 500, 1}}).applied == 1);
  s.finish(true);
  CHECK(read_file(dir.path("out.jsonl")) ==
        std::string(R"({"ip":"1.1.1.1","k":1,"geo":{"c":1}})") + "\n" +
        R"({"ip":"2.2.2.2","_dibs":{"failed":{"reason":"HTTP 500","httpStatus":500,"attempts":1}}})" + "\n");
}

TEST_CASE("file mode: a line that is not an object keeps its text under _dibs", "[jsonl][user-data]") {
  user_data_dir dir("case3");
  std::ofstream(dir.path("in.jsonl"), std::ios::binary) << "[1,2]\n{\"ip\":\"1.1.1.1\",\"geo\":{\"c\":1}}\n";
  jsonl::jsonl_store s(options_in(dir));
  CHECK(s.stats_blocking().failed == 1);
  s.finish(true);
  CHECK(read_file(dir.path("out.jsonl")) ==
        R"x({"_dibs":{"line":1,"input":"[1,2]","failed":{"reason":"line 1 is not a JSON object (it is array)","httpStatus":0,"attempts":0}}})x"
        "\n" R"({"ip":"1.1.1.1","geo":{"c":1}})" "\n");
}

TEST_CASE("file mode: a line cut short is failed with its reason, never sent, and an input with no object at all is refused",
          "[jsonl][user-data]") {
  user_data_dir dir("case3b");
  std::ofstream(dir.path("in.jsonl"), std::ios::binary)
      << "{\"ip\":\"1.1.1.1\"}\n{\"cust_id\": \"BROKEN\", \"ip\": \"8.8.4.4\"\n";
  {
    jsonl::jsonl_store s(options_in(dir));
    const auto jobs = s.claim_blocking(claim_request{10, "w", std::chrono::seconds(60), std::chrono::seconds(1)});
    REQUIRE(jobs.size() == 1);  // the whole object only: the cut line is no item
    CHECK(jobs[0].id == "1");
    CHECK(s.stats_blocking().failed == 1);
  }
  const auto reasons = [&] {
    auto ro = options_in(dir);
    ro.read_only = true;
    return jsonl::jsonl_store(ro).failure_reasons(5);
  }();
  REQUIRE(reasons.size() == 1);
  CHECK_THAT(reasons[0].reason, Catch::StartsWith("line 2 is not JSON ("));

  for (const char* not_jsonl : {"a,b,c\n1,2,3\n", "\x89PNG\r\n\x1a\n\x00\x01\n", "[1]\n\"text\"\n"}) {
    user_data_dir other("case3c");
    std::ofstream(other.path("in.jsonl"), std::ios::binary) << not_jsonl;
    CHECK_THROWS_WITH(jsonl::jsonl_store(options_in(other)),
                      Catch::Contains("is not JSON Lines: none of its") && Catch::Contains("nothing was sent to the API"));
    CHECK_FALSE(std::ifstream(other.path("out.jsonl.journal")).good());  // refused: no file left behind
  }
}

TEST_CASE("file mode --id-field: a line's key is its member's string or number, and every object line needs its own",
          "[jsonl][id-field]") {
  std::string why;
  CHECK(jsonl::line_key(R"({"id":"evt-1","ip":"x"})", "id", why) == std::optional<std::string>("evt-1"));
  CHECK(jsonl::line_key(R"({"id":"a\"b"})", "id", why) == std::optional<std::string>("a\"b"));  // unescaped
  CHECK(jsonl::line_key(R"({"id": 42.50 })", "id", why) == std::optional<std::string>("42.50"));  // as written
  CHECK_FALSE(jsonl::line_key(R"({"ip":"x"})", "id", why));
  CHECK(why == "has no 'id'");
  CHECK_FALSE(jsonl::line_key(R"({"id":{"a":1}})", "id", why));
  CHECK(why == "has 'id': an object, not a string or a number");
  CHECK_FALSE(jsonl::line_key(R"({"id":null})", "id", why));
  CHECK(why == "has 'id': null, not a string or a number");
  CHECK_FALSE(jsonl::line_key(R"({"id":""})", "id", why));
  CHECK(why == "has an empty 'id'");

  // Blank lines are skipped; lines that are not objects, or not JSON though they start like one
  // (items that will fail), are named "line N" and found again by it; numbering counts every line.
  const auto keys =
      jsonl::read_line_keys("{\"id\":\"a\"}\n\n[1,2]\n{\"id\":7}\r\n{\"id\":\"b\",\"x\":tru}\n", "id", "in.jsonl");
  CHECK(keys.key_of_line.size() == 4);
  CHECK(keys.key_of_line.at(1) == "a");
  CHECK(keys.key_of_line.at(3) == "line 3");
  CHECK(keys.key_of_line.at(4) == "7");
  CHECK(keys.key_of_line.at(5) == "line 5");
  CHECK(keys.line_of_key.at("7") == 4);
  CHECK(keys.line_of_key.at("line 5") == 5);
  CHECK_THROWS_WITH(jsonl::read_line_keys("{\"id\":\"line 2\"}\n{\"id\":tru}\n", "id", "in.jsonl"),
                    Catch::Contains("lines 1 and 2 of in.jsonl both have 'line 2'"));
  CHECK_THROWS_WITH(jsonl::read_line_keys("{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"a\"}\n", "id", "in.jsonl"),
                    Catch::Contains("id_field id: lines 1 and 3 of in.jsonl both have 'a'"));
  CHECK_THROWS_WITH(jsonl::read_line_keys("{\"id\":\"a\"}\n{\"ip\":1}\n", "id", "in.jsonl"),
                    Catch::Contains("id_field id: line 2 of in.jsonl has no 'id'"));
}
