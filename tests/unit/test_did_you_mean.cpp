// The "did you mean" of usage errors: close typos find their name, unrelated words find none.
#include "apps/dibs/did_you_mean.hpp"

#include <catch2/catch.hpp>

using dibs::cli::edit_distance;
using dibs::cli::nearest_name;

TEST_CASE("edit distance counts insertions, deletions, substitutions and swapped neighbours", "[cli][did-you-mean]") {
  CHECK(edit_distance("enrich", "enrich") == 0);
  CHECK(edit_distance("enrch", "enrich") == 1);
  CHECK(edit_distance("enrcih", "enrich") == 1);  // a swap is one edit
  CHECK(edit_distance("", "seed") == 4);
  CHECK(edit_distance("status", "stub") == 3);  // drop "a", "t"; "s" -> "b"
}

TEST_CASE("a typo of a subcommand or flag finds the name meant", "[cli][did-you-mean]") {
  const std::vector<std::string> commands{"demo", "enrich", "seed", "status", "stub"};
  CHECK(nearest_name("enrch", commands) == "enrich");
  CHECK(nearest_name("stauts", commands) == "status");
  CHECK(nearest_name("sed", commands) == "seed");
  const std::vector<std::string> flags{"--store", "--url", "--concurrency", "--lease", "--max-attempts"};
  CHECK(nearest_name("--stroe", flags) == "--store");
  CHECK(nearest_name("--concurency", flags) == "--concurrency");
  CHECK(nearest_name("--conc", flags) == "--concurrency");  // an abbreviation
  CHECK(nearest_name("--max-attempt", flags) == "--max-attempts");
}

TEST_CASE("a word far from every name suggests nothing", "[cli][did-you-mean]") {
  const std::vector<std::string> commands{"demo", "enrich", "seed", "status", "stub"};
  CHECK_FALSE(nearest_name("geolocate", commands));
  CHECK_FALSE(nearest_name("--", commands));
  CHECK_FALSE(nearest_name("x", std::vector<std::string>{}));
}
