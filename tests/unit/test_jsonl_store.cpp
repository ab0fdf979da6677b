// File mode's store: line numbers as ids, outcomes journaled before they are acknowledged, a
// resumed run skips what the journal holds, the output in the input's order, and the refusals
// that keep two runs (or a changed input) from mixing.
#include <adapters/jsonl/jsonl_store.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dibs;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {
struct files {
  files() : dir(fs::temp_directory_path() / ("dibs-jsonl-" + std::to_string(::getpid()) + "-" + std::to_string(counter++))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~files() { fs::remove_all(dir); }
  jsonl::jsonl_options options() const {
    jsonl::jsonl_options o;
    o.in = (dir / "in.jsonl").string();
    o.out = (dir / "out.jsonl").string();
    return o;
  }
  void write_in(const std::string& text) const { std::ofstream(dir / "in.jsonl", std::ios::binary) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir;
  static inline int counter = 0;
};

claim_request claim_of(std::size_t n) { return {n, "w1", 60s, 0ms}; }
}  // namespace

TEST_CASE("json_pointer_of and with_field keep the line's other members as written", "[jsonl]") {
  CHECK(jsonl::json_pointer_of("a.b~c/d") == "/a/b~0c~1d");
  CHECK(jsonl::with_field(R"({"ip":"1.2.3.4","location":null,"n":[1, {"a":2}],"x":1.50})", "location", R"({"c":"DE"})") ==
        R"({"ip":"1.2.3.4","n":[1, {"a":2}],"x":1.50,"location":{"c":"DE"}})");
  CHECK(jsonl::with_field(R"({"ip":"1"})", "loc", "null", R"("failed":{"reason":"x"})") ==
        R"({"ip":"1","loc":null,"failed":{"reason":"x"}})");
  CHECK(jsonl::with_field(R"({"ip":"1","failed":{"old":1}})", "loc", "2") == R"({"ip":"1","loc":2})");
  CHECK(jsonl::with_field("[1,2]", "loc", "2").empty());
  CHECK(jsonl::with_field("{\"a\":1} junk", "loc", "2").empty());
  // Found by fuzzing: a malformed value nested in an array was copied into the output as it was.
  CHECK(jsonl::with_field(R"({"ip":"1","n":[1,{"a"?2}]})", "loc", "2").empty());
}

TEST_CASE("a JSON Lines file as a store: ids are line numbers, outcomes survive a restart, the output keeps the order", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n"      // 1
             "\n"                                     // 2: blank, not an item
             "{\"originatingIp\":\"1.1.1.1\",\"k\":7}\n"  // 3
             "not json\n"                             // 4: failed at once
             "{\"other\":true}\n"                     // 5: the field is missing (the processor decides)
             "{\"originatingIp\":\"9.9.9.9\"}\n");    // 6
  {
    jsonl::jsonl_store s(f.options());
    auto st = s.stats_blocking();
    CHECK(st.pending == 4);
    CHECK(st.failed == 1);
    auto jobs = s.claim_blocking(claim_of(10));
    REQUIRE(jobs.size() == 4);
    CHECK(jobs[0].id == "1");
    CHECK(jobs[1].id == "3");
    CHECK(jobs[1].fields.at(0).value == "1.1.1.1");
    CHECK(jobs[2].id == "5");
    CHECK(jobs[2].fields.at(0).st == job_field::state::missing);
    CHECK(jobs[3].id == "6");

    auto stale = jobs[0].ref();
    stale.token ^= 1;  // a lease that is not the holder's: nothing lands, nothing is journaled
    auto lost = s.complete_blocking({completion{stale, "{\"bad\":1}"}});
    CHECK(lost.applied == 0);
    CHECK(lost.lost == std::vector<std::string>{"1"});

    CHECK(s.complete_blocking({completion{jobs[0].ref(), "{\"c\":\"US\"}"}, completion{jobs[1].ref(), "{\"c\":\"AU\"}"}}).applied == 2);
    CHECK(s.fail_blocking({failure{jobs[2].ref(), "source field 'originatingIp' is missing", 0, 1}}).applied == 1);
    CHECK(s.release_blocking({release_item{jobs[3].ref(), 0ms, "shutdown", 0}}).applied == 1);
    CHECK(s.finish(false) != "");  // not drained: the journal stays
  }  // "killed" here: only the journal remains
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl"));

  jsonl::jsonl_store again(f.options());
  CHECK(again.resumed() == 4);  // lines 1, 3, 4 and 5 are not done again
  auto st = again.stats_blocking();
  CHECK(st.pending == 1);
  CHECK(st.done == 2);
  CHECK(st.failed == 2);
  auto jobs = again.claim_blocking(claim_of(10));
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].id == "6");
  CHECK(again.complete_blocking({completion{jobs[0].ref(), "{\"c\":\"CH\"}"}}).applied == 1);
  CHECK_THAT(again.finish(true), Catch::StartsWith("wrote "));
  CHECK(f.read("out.jsonl") ==
        "{\"originatingIp\":\"8.8.8.8\",\"location\":{\"c\":\"US\"}}\n"
        "{\"originatingIp\":\"1.1.1.1\",\"k\":7,\"location\":{\"c\":\"AU\"}}\n"
        "{\"line\":4,\"input\":\"not json\",\"location\":null,\"failed\":{\"reason\":\"line 4 is not a JSON object\",\"httpStatus\":0,\"attempts\":0}}\n"
        "{\"other\":true,\"location\":null,\"failed\":{\"reason\":\"source field 'originatingIp' is missing\",\"httpStatus\":0,\"attempts\":1}}\n"
        "{\"originatingIp\":\"9.9.9.9\",\"location\":{\"c\":\"CH\"}}\n");
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl.journal"));
}

TEST_CASE("file mode refuses what would mix two runs: a held journal, a changed input, an existing output", "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n");
  {
    jsonl::jsonl_store first(f.options());
    CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("another dibs run is using"));
    auto ro = f.options();
    ro.read_only = true;  // `dibs status` may look while a run goes on
    CHECK(jsonl::jsonl_store(ro).stats_blocking().pending == 1);
  }
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"4.4.4.4\"}\n");  // the input changed
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("belongs to another version of the input"));
  fs::remove(f.dir / "out.jsonl.journal");
  {
    jsonl::jsonl_store s(f.options());
    auto jobs = s.claim_blocking(claim_of(10));
    REQUIRE(jobs.size() == 2);
    s.complete_blocking({completion{jobs[0].ref(), "1"}, completion{jobs[1].ref(), "2"}});
    s.finish(true);
  }
  CHECK_THROWS_WITH(jsonl::jsonl_store(f.options()), Catch::Contains("exists (a finished run?)"));
  auto ro = f.options();
  ro.read_only = true;
  auto st = jsonl::jsonl_store(ro).stats_blocking();  // status of a finished run, from its output
  CHECK(st.done == 2);
  CHECK(st.pending == 0);
  auto missing = f.options();
  missing.in = (f.dir / "nope.jsonl").string();
  CHECK_THROWS_WITH(jsonl::jsonl_store(missing), Catch::Contains("cannot read the input") && Catch::Contains("nope.jsonl"));
}
