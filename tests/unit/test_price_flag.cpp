// --price as the providers' price lists write it: per million tokens, per thousand, per token.
#include "apps/dibs/price_flag.hpp"

#include <catch2/catch.hpp>

using dibs::cli::parse_prices;

TEST_CASE("--price: input and output, per million or thousand tokens or per token", "[price]") {
  const auto p = parse_prices("input=0.15/1M,output=0.60/1M");
  CHECK(p.input == Approx(0.15e-6));
  CHECK(p.output == Approx(0.60e-6));
  const auto k = parse_prices("output=0.002/1K,input=0.001/1K");
  CHECK(k.input == Approx(1e-6));
  CHECK(k.output == Approx(2e-6));
  CHECK(parse_prices("input=0,output=0.000001").output == Approx(1e-6));
  for (const char* bad : {"", "input=0.15/1M", "input=x/1M,output=1/1M", "input=1/1G,output=1/1M", "input=-1/1M,output=1/1M",
                          "input=1/1M,input=1/1M", "cached=1/1M,output=1/1M", "input 1/1M,output=1/1M"})
    CHECK_THROWS_WITH(parse_prices(bad), Catch::Contains("--price"));
}
