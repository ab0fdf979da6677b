#include "expected_outcome.hpp"

#include <dibs/ipapi/ipv4_ranges.hpp>

#include <algorithm>
#include <cctype>

namespace dibs::chaos {

namespace {
bool contains_nocase(std::string_view text, std::string_view word) {
  return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

expected_outcome expected_for(std::string_view address, store_kind store, double poison_rate, std::uint64_t poison_seed) {
  expected_outcome e;
  e.poison = stub::poison_for(address, poison_rate, poison_seed);
  e.answer = e.poison == stub::poison::none ? stub::answer_for(address) : stub::poison_answer(e.poison, address);
  switch (e.poison) {
    case stub::poison::none:
      e.done = e.answer.rfind("{\"status\":\"fail\"", 0) != 0;  // private and reserved ranges: no data
      break;
    case stub::poison::long_fail:
      e.done = false;  // ip-api's "no data", whose message no MariaDB TEXT column holds
      e.store_refuses = store == store_kind::mariadb;
      break;
    case stub::poison::deep_json:  // MariaDB's JSON check refuses it; BSON and jsonb hold 40 levels
      e.done = store != store_kind::mariadb;
      e.store_refuses = !e.done;
      break;
    case stub::poison::nul_string:  // BSON and jsonb refuse it; MariaDB's JSON text keeps the escape
      e.done = store == store_kind::mariadb;
      e.store_refuses = !e.done;
      break;
  }
  return e;
}

bool reason_fits(const expected_outcome& e, std::string_view reason, store_kind store) {
  if (reason.empty() || starts_with(reason, "gave up after")) return false;
  switch (e.poison) {
    case stub::poison::none:
      return starts_with(reason, "the API has no data: ");
    case stub::poison::long_fail:
      // The message, whole where the store holds it, shortened where it does not.
      if (store != store_kind::mariadb) return starts_with(reason, "the API has no data: mmm");
      return reason.size() < 65'536 && (starts_with(reason, "the API has no data: mmm") || contains_nocase(reason, "too long") ||
                                        contains_nocase(reason, "refus"));
    case stub::poison::deep_json:
      return contains_nocase(reason, "constraint") || contains_nocase(reason, "refus") || contains_nocase(reason, "depth");
    case stub::poison::nul_string:  // jsonb: "unsupported Unicode escape sequence (SQLSTATE 22P05)"
      return contains_nocase(reason, store == store_kind::postgres ? "unicode escape" : "NUL");
  }
  return false;
}

}  // namespace dibs::chaos
