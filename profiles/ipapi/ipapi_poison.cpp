// Poison answers: valid JSON that a store may refuse (see ipapi_stub.hpp). Deterministic per
// address, so the chaos checker knows which items must end failed, and with which reason.
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/ipapi/ipv4_ranges.hpp>
#include "profiles/ipapi/splitmix.hpp"

namespace dibs::stub {

namespace {
constexpr int deep_levels = 40;               // MariaDB refuses a JSON depth of 32 or more
constexpr std::size_t long_message = 70'000;  // a TEXT column holds 65,535 bytes
}  // namespace

poison poison_for(std::string_view query, double rate, std::uint64_t seed) {
  if (rate <= 0) return poison::none;
  std::uint32_t addr = 0;
  // Only public addresses: the private ones already fail, with their own reason.
  if (!parse_ipv4(std::string(query), addr) || classify_ipv4(addr) != ipv4_range::public_) return poison::none;
  const auto h = splitmix64(splitmix64(addr) ^ seed);
  const double u = static_cast<double>(h >> 11) / static_cast<double>(1ULL << 53);
  if (u >= rate) return poison::none;
  switch ((h >> 3) % 3) {
    case 0: return poison::deep_json;
    case 1: return poison::long_fail;
    default: return poison::nul_string;
  }
}

std::string poison_answer(poison kind, std::string_view query) {
  const std::string q(query);
  switch (kind) {
    case poison::deep_json: {
      std::string nest;
      for (int i = 0; i < deep_levels; ++i) nest += "{\"d\":";
      nest += "1";
      nest += std::string(deep_levels, '}');
      return "{\"status\":\"success\",\"query\":\"" + q + "\",\"nested\":" + nest + "}";
    }
    case poison::long_fail:
      return "{\"status\":\"fail\",\"message\":\"" + std::string(long_message, 'm') + "\",\"query\":\"" + q + "\"}";
    case poison::nul_string:
      return "{\"status\":\"success\",\"query\":\"" + q + "\",\"isp\":\"nul\\u0000byte\"}";
    case poison::none:
      break;
  }
  return answer_for(query);
}

const char* poison_name(poison kind) {
  switch (kind) {
    case poison::deep_json: return "deep JSON";
    case poison::long_fail: return "70 KB fail message";
    case poison::nul_string: return "NUL in a string";
    case poison::none: break;
  }
  return "none";
}

std::string answer_with_poison(std::string_view query, double rate, std::uint64_t seed) {
  const auto kind = poison_for(query, rate, seed);
  return kind == poison::none ? answer_for(query) : poison_answer(kind, query);
}

}  // namespace dibs::stub
