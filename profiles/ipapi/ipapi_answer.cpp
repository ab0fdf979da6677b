// The deterministic ip-api-shaped answers of the stub.
#include <dibs/ipapi/ipapi_stub.hpp>

#include <dibs/ipapi/ipv4_ranges.hpp>
#include "profiles/ipapi/splitmix.hpp"

#include <simdjson.h>

#include <cstdio>

namespace dibs::stub {

namespace {
struct place {
  const char* country;
  const char* country_code;
  const char* region;
  const char* region_name;
  const char* city;
  const char* zip;
  double lat;
  double lon;
  const char* timezone;
};

constexpr place places[] = {
    {"United States", "US", "VA", "Virginia", "Ashburn", "20149", 39.03, -77.5, "America/New_York"},
    {"United States", "US", "CA", "California", "San Jose", "95141", 37.33, -121.89, "America/Los_Angeles"},
    {"Germany", "DE", "HE", "Hesse", "Frankfurt am Main", "60313", 50.11, 8.68, "Europe/Berlin"},
    {"Netherlands", "NL", "NH", "North Holland", "Amsterdam", "1012", 52.37, 4.89, "Europe/Amsterdam"},
    {"United Kingdom", "GB", "ENG", "England", "London", "EC1A", 51.51, -0.09, "Europe/London"},
    {"France", "FR", "IDF", "Ile-de-France", "Paris", "75001", 48.86, 2.35, "Europe/Paris"},
    {"Japan", "JP", "13", "Tokyo", "Tokyo", "100-0001", 35.69, 139.69, "Asia/Tokyo"},
    {"Singapore", "SG", "01", "Central Singapore", "Singapore", "018989", 1.29, 103.85, "Asia/Singapore"},
    {"Brazil", "BR", "SP", "Sao Paulo", "Sao Paulo", "01000-000", -23.55, -46.63, "America/Sao_Paulo"},
    {"Australia", "AU", "NSW", "New South Wales", "Sydney", "2000", -33.87, 151.21, "Australia/Sydney"},
    {"India", "IN", "MH", "Maharashtra", "Mumbai", "400001", 19.08, 72.88, "Asia/Kolkata"},
    {"Canada", "CA", "ON", "Ontario", "Toronto", "M5H", 43.65, -79.38, "America/Toronto"},
    {"South Africa", "ZA", "GP", "Gauteng", "Johannesburg", "2000", -26.2, 28.05, "Africa/Johannesburg"},
    {"Sweden", "SE", "AB", "Stockholm County", "Stockholm", "111 20", 59.33, 18.07, "Europe/Stockholm"},
    {"Mexico", "MX", "CMX", "Mexico City", "Mexico City", "06000", 19.43, -99.13, "America/Mexico_City"},
    {"Poland", "PL", "14", "Mazovia", "Warsaw", "00-001", 52.23, 21.01, "Europe/Warsaw"},
};

constexpr const char* isps[] = {"Example Telecom", "Loopback Networks", "Stub Fiber", "Acme Broadband",
                                "Northwind Hosting", "Contoso Cloud", "Globex Mobile", "Initech DSL"};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}
}  // namespace

std::string answer_for(std::string_view query) {
  std::uint32_t addr = 0;
  if (!parse_ipv4(std::string(query), addr))
    return "{\"status\":\"fail\",\"message\":\"invalid query\",\"query\":" + json_string(query) + "}";
  switch (classify_ipv4(addr)) {
    case ipv4_range::private_:
      return "{\"status\":\"fail\",\"message\":\"private range\",\"query\":" + json_string(query) + "}";
    case ipv4_range::reserved:
      return "{\"status\":\"fail\",\"message\":\"reserved range\",\"query\":" + json_string(query) + "}";
    case ipv4_range::public_:
      break;
  }
  const auto h = splitmix64(addr);
  const auto& p = places[h % std::size(places)];
  const char* isp = isps[(h >> 8) % std::size(isps)];
  const unsigned asn = 1000 + static_cast<unsigned>((h >> 16) % 60000);
  const double lat = p.lat + static_cast<double>((h >> 32) % 1000) / 10000.0;
  const double lon = p.lon + static_cast<double>((h >> 42) % 1000) / 10000.0;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"status\":\"success\",\"country\":\"%s\",\"countryCode\":\"%s\",\"region\":\"%s\","
                "\"regionName\":\"%s\",\"city\":\"%s\",\"zip\":\"%s\",\"lat\":%.4f,\"lon\":%.4f,"
                "\"timezone\":\"%s\",\"isp\":\"%s\",\"org\":\"%s\",\"as\":\"AS%u %s\",\"query\":\"%s\"}",
                p.country, p.country_code, p.region, p.region_name, p.city, p.zip, lat, lon, p.timezone, isp,
                isp, asn, isp, ipv4_to_string(addr).c_str());
  return buf;
}

batch_reply batch_answer_for(std::string_view request_body, double poison_rate, std::uint64_t poison_seed) {
  static constexpr std::size_t max_queries = 100;  // ip-api's limit per batch
  simdjson::dom::parser parser;
  simdjson::dom::array queries;
  if (parser.parse(request_body.data(), request_body.size()).get_array().get(queries))
    return {400, "{\"status\":\"fail\",\"message\":\"invalid JSON: expected an array of queries\"}"};
  if (queries.size() > max_queries)
    return {422, "{\"status\":\"fail\",\"message\":\"too many queries (at most 100)\"}"};
  std::string out = "[";
  for (auto q : queries) {
    std::string_view text;
    if (q.is_object()) {
      if (q["query"].get_string().get(text)) return {400, "{\"status\":\"fail\",\"message\":\"query without a string\"}"};
    } else if (q.get_string().get(text)) {
      return {400, "{\"status\":\"fail\",\"message\":\"a query is neither a string nor an object\"}"};
    }
    if (out.size() > 1) out += ',';
    out += answer_with_poison(text, poison_rate, poison_seed);
  }
  return {200, out + "]"};
}

}  // namespace dibs::stub
