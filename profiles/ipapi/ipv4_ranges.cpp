#include <dibs/ipapi/ipv4_ranges.hpp>

#include <cstdio>

namespace dibs {

namespace {
struct range {
  std::uint32_t base;
  int prefix;
  ipv4_range kind;
};
constexpr std::uint32_t ip(int a, int b, int c, int d) {
  return (std::uint32_t(a) << 24) | (std::uint32_t(b) << 16) | (std::uint32_t(c) << 8) | std::uint32_t(d);
}
// RFC 6890 special-purpose blocks; the private ones are those ip-api calls "private range".
constexpr range special[] = {
    {ip(0, 0, 0, 0), 8, ipv4_range::reserved},      {ip(10, 0, 0, 0), 8, ipv4_range::private_},
    {ip(100, 64, 0, 0), 10, ipv4_range::reserved},   {ip(127, 0, 0, 0), 8, ipv4_range::private_},
    {ip(169, 254, 0, 0), 16, ipv4_range::private_},  {ip(172, 16, 0, 0), 12, ipv4_range::private_},
    {ip(192, 0, 0, 0), 24, ipv4_range::reserved},    {ip(192, 0, 2, 0), 24, ipv4_range::reserved},
    {ip(192, 88, 99, 0), 24, ipv4_range::reserved},  {ip(192, 168, 0, 0), 16, ipv4_range::private_},
    {ip(198, 18, 0, 0), 15, ipv4_range::reserved},   {ip(198, 51, 100, 0), 24, ipv4_range::reserved},
    {ip(203, 0, 113, 0), 24, ipv4_range::reserved},  {ip(224, 0, 0, 0), 4, ipv4_range::reserved},
    {ip(240, 0, 0, 0), 4, ipv4_range::reserved},
};
}  // namespace

ipv4_range classify_ipv4(std::uint32_t addr) {
  for (const auto& r : special) {
    const std::uint32_t mask = r.prefix == 0 ? 0 : ~std::uint32_t(0) << (32 - r.prefix);
    if ((addr & mask) == r.base) return r.kind;
  }
  return ipv4_range::public_;
}

std::string ipv4_to_string(std::uint32_t a) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
  return buf;
}

bool parse_ipv4(const std::string& text, std::uint32_t& out) {
  std::uint32_t result = 0;
  std::size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= text.size() || text[i] != '.') return false;
      ++i;
    }
    const std::size_t start = i;
    unsigned value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 3) value = value * 10 + (text[i++] - '0');
    if (i == start || value > 255) return false;
    if (i - start > 1 && text[start] == '0') return false;  // no leading zeros: 010 is ambiguous
    result = (result << 8) | value;
  }
  if (i != text.size()) return false;
  out = result;
  return true;
}

std::uint32_t random_public_ipv4(std::mt19937_64& rng) {
  while (true) {
    const auto a = static_cast<std::uint32_t>(rng());
    if (classify_ipv4(a) == ipv4_range::public_) return a;
  }
}

}  // namespace dibs
