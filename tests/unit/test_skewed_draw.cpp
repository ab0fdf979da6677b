// `--distinct N`: every one of the N keys appears, the popular ones far more often, and a seed
// gives the same documents again.
#include <dibs/ipapi/ipv4_ranges.hpp>
#include <profiles/ipapi/skewed_draw.hpp>

#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("every rank appears at least once: exactly N distinct keys, repeat factor docs/N", "[reuse][seed]") {
  std::mt19937_64 rng(7);
  const auto ranks = skewed_ranks(10'000, 1'000, rng);
  REQUIRE(ranks.size() == 10'000);
  std::set<std::uint32_t> seen(ranks.begin(), ranks.end());
  CHECK(seen.size() == 1'000);
  CHECK(*seen.rbegin() == 999);
}

TEST_CASE("the draw is skewed: the first ranks take far more documents than the last ones", "[reuse][seed]") {
  std::mt19937_64 rng(7);
  const auto ranks = skewed_ranks(100'000, 1'000, rng);
  std::vector<std::size_t> count(1'000);
  for (auto r : ranks) ++count[r];
  std::size_t top10 = 0, bottom500 = 0;
  for (std::size_t k = 0; k < 10; ++k) top10 += count[k];
  for (std::size_t k = 500; k < 1'000; ++k) bottom500 += count[k];
  // Log-uniform over 1000: the top 10 ranks get ln(11)/ln(1001) ~ 35% of the draws, the bottom
  // half ln(1001/501)/ln(1001) ~ 10%. Uniform would give 1% and 50%.
  CHECK(top10 > 3 * bottom500);
  CHECK(count[0] > 10 * count[999]);
}

TEST_CASE("repeats are spread over the run, not bunched at the start", "[reuse][seed]") {
  std::mt19937_64 rng(7);
  const auto ranks = skewed_ranks(10'000, 1'000, rng);
  // The first 1000 documents are not simply every key once (shuffled with the rest).
  std::set<std::uint32_t> first(ranks.begin(), ranks.begin() + 1'000);
  CHECK(first.size() < 900);
}

TEST_CASE("more distinct keys than documents: every document its own key", "[reuse][seed]") {
  std::mt19937_64 rng(7);
  const auto ranks = skewed_ranks(50, 1'000, rng);
  CHECK(std::set<std::uint32_t>(ranks.begin(), ranks.end()).size() == 50);
  CHECK(skewed_ranks(50, 0, rng).empty());
}

TEST_CASE("ipv4_draw: the same seed draws the same addresses, and distinct 0 is the old uniform draw", "[reuse][seed]") {
  ipv4_draw a(200, 20, 5), b(200, 20, 5);
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 200; ++i) {
    const auto x = a.next();
    CHECK(x == b.next());
    seen.insert(x);
  }
  CHECK(seen.size() == 20);
  ipv4_draw plain(3, 0, 9);
  std::mt19937_64 rng(9);
  for (int i = 0; i < 3; ++i) CHECK(plain.next() == random_public_ipv4(rng));
}
