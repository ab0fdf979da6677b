// --price as the providers' price lists write it: per million tokens, per thousand, per token.
#include "apps/dibs/dry_run.hpp"
#include "apps/dibs/price_flag.hpp"

#include <catch2/catch.hpp>

using dibs::cli::parse_prices;

TEST_CASE("the price flag: input and output, per million or thousand tokens or per token", "[price]") {
  const auto p = parse_prices("input=0.15/1M,output=0.60/1M");
  CHECK(p.input == Approx(0.15e-6));
  CHECK(p.output == Approx(0.60e-6));
  const auto k = parse_prices("output=0.002/1K,input=0.001/1K");
  CHECK(k.input == Approx(1e-6));
  CHECK(k.output == Approx(2e-6));
  CHECK(parse_prices("input=0,output=0.000001").output == Approx(1e-6));
  // An embeddings API's: input alone, output 0.
  CHECK(parse_prices("input=0.02/1M").input == Approx(0.02e-6));
  CHECK(parse_prices("input=0.02/1M").output == 0);
  for (const char* bad : {"", "output=0.60/1M", "input=x/1M,output=1/1M", "input=1/1G,output=1/1M", "input=-1/1M,output=1/1M",
                          "input=1/1M,input=1/1M", "cached=1/1M,output=1/1M", "input 1/1M,output=1/1M"})
    CHECK_THROWS_WITH(parse_prices(bad), Catch::Contains("--price"));
}

TEST_CASE("a dry run's sample of an LLM API: its tokens and cost, and the whole run's estimated from it", "[price]") {
  const auto line = dibs::cli::token_estimate_line(300, 100, 2, 1000, 0.15e-6, 0.60e-6);
  CHECK_THAT(line, Catch::Contains("used 400 tokens (300 input, 100 output), costing 0.000105 at --price"));
  CHECK_THAT(line, Catch::Contains("the 1000 pending items would use about 200000 tokens (150000 input, 50000 output), costing about 0.0525"));
  CHECK_THAT(dibs::cli::token_estimate_line(300, 100, 2, 1'000'000, 0.15e-6, 0.60e-6), Catch::Contains("costing about 52.5"));
  const auto unpriced = dibs::cli::token_estimate_line(300, 100, 2, std::nullopt, 0, 0);
  CHECK(unpriced == "dry run: the sample's answers used 400 tokens (300 input, 100 output)");
}
