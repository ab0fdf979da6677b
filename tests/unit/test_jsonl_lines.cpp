// What a file's lines are to the pre-flight (its sample of an open line, the names the file
// uses) and to --map (a line that already holds a member the map writes).
#include "support/jsonl_files.hpp"
#include <adapters/jsonl/json_members.hpp>
#include <dibs/stores/jsonl_store.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using files = dibs::test::jsonl_files;
namespace fs = std::filesystem;

TEST_CASE("member_names lists a line's top-level names in order, none for what is not an object", "[jsonl][preflight]") {
  CHECK(dibs::jsonl::member_names(R"({"originatingIp":"8.8.8.8","client":{"ip":"1"},"n":1})") ==
        std::vector<std::string>{"originatingIp", "client", "n"});
  CHECK(dibs::jsonl::member_names("[1,2]").empty());
  CHECK(dibs::jsonl::member_names("{\"a\":").empty());
}

TEST_CASE("the pre-flight's sample of a file: an open line whose field is a string first, its names from the file",
          "[jsonl][preflight]") {
  files f;
  f.write_in("{\"other\":true}\n"                           // 1: no field: not the sample while another has it
             "\n"                                           // 2: blank
             "{\"originatingIp\":\"1.1.1.1\",\"k\":7}\n");  // 3
  jsonl::jsonl_store s(f.options());
  auto sample = s.sample_pending();
  REQUIRE(sample);
  CHECK(sample->id == "3");
  CHECK(sample->source.name == "originatingIp");
  CHECK(sample->source.value == "1.1.1.1");
  CHECK(sample->fields == std::vector<std::string>{"originatingIp", "k"});
}

TEST_CASE("no line has the field: the sample is an open line without it, for the refusal to name", "[jsonl][preflight]") {
  files f;
  f.write_in("{\"other\":true,\"n\":1}\n");
  jsonl::jsonl_store s(f.options());
  auto sample = s.sample_pending();
  REQUIRE(sample);
  CHECK(sample->id == "1");
  CHECK(sample->source.st == job_field::state::missing);
  CHECK(sample->fields == std::vector<std::string>{"other", "n"});
}

TEST_CASE("a line to be asked that has a member the map writes is refused at start: the user's value is never written over",
          "[jsonl]") {
  files f;
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\",\"label\":\"mine\"}\n");
  auto o = f.options();
  o.mapped_fields = {"label"};
  CHECK_THROWS_WITH(jsonl::jsonl_store(o), Catch::Contains("line 2 has a member 'label' of its own"));
  CHECK_FALSE(fs::exists(f.dir / "out.jsonl.journal"));
  // A line already done (its target set) is passed through as it is: its members are no matter.
  f.write_in("{\"originatingIp\":\"8.8.8.8\"}\n{\"originatingIp\":\"1.1.1.1\",\"label\":\"mine\",\"location\":{}}\n");
  CHECK(jsonl::jsonl_store(o).stats_blocking().pending == 1);
}
