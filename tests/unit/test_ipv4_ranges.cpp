#include <dibs/ipapi/ipv4_ranges.hpp>

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("IPv4 text parses strictly", "[ipv4]") {
  std::uint32_t a = 0;
  CHECK(parse_ipv4("8.8.4.4", a));
  CHECK(a == 0x08080404u);
  CHECK(parse_ipv4("255.255.255.255", a));
  CHECK_FALSE(parse_ipv4("256.1.1.1", a));
  CHECK_FALSE(parse_ipv4("1.2.3", a));
  CHECK_FALSE(parse_ipv4("1.2.3.4.5", a));
  CHECK_FALSE(parse_ipv4("01.2.3.4", a));
  CHECK_FALSE(parse_ipv4(" 1.2.3.4", a));
  CHECK_FALSE(parse_ipv4("", a));
  CHECK(ipv4_to_string(0x08080404u) == "8.8.4.4");
}

TEST_CASE("IPv4 special ranges are classified as ip-api does", "[ipv4]") {
  auto cls = [](const char* text) {
    std::uint32_t a = 0;
    REQUIRE(parse_ipv4(text, a));
    return classify_ipv4(a);
  };
  CHECK(cls("10.1.2.3") == ipv4_range::private_);
  CHECK(cls("192.168.0.1") == ipv4_range::private_);
  CHECK(cls("172.31.255.255") == ipv4_range::private_);
  CHECK(cls("172.32.0.0") == ipv4_range::public_);
  CHECK(cls("127.0.0.1") == ipv4_range::private_);
  CHECK(cls("100.64.0.1") == ipv4_range::reserved);
  CHECK(cls("224.0.0.1") == ipv4_range::reserved);
  CHECK(cls("255.255.255.255") == ipv4_range::reserved);
  CHECK(cls("8.8.8.8") == ipv4_range::public_);

  std::mt19937_64 rng(1);
  for (int i = 0; i < 10'000; ++i) CHECK(classify_ipv4(random_public_ipv4(rng)) == ipv4_range::public_);
}
