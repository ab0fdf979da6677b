// What each item must end as, from its address alone: the stub's answers are deterministic per
// address, and so is which addresses are poisoned (stub::poison_for). A pure function, so the
// checkers of every store agree on it.
#pragma once

#include <dibs/ipapi/ipapi_stub.hpp>

#include <string>
#include <string_view>

namespace dibs::chaos {

enum class store_kind { mariadb, mongo, postgres };

struct expected_outcome {
  bool done = true;
  std::string answer;               // when done: exactly the stub's answer
  stub::poison poison = stub::poison::none;
  bool store_refuses = false;       // failed because the store refused the answer (poison)
};

expected_outcome expected_for(std::string_view address, store_kind store, double poison_rate, std::uint64_t poison_seed);

// Whether a failed item's reason is the one its outcome calls for: the API's "no data" for the
// private ranges, the store's refusal for poison it can't hold, the (possibly shortened) fail
// message for a 70 KB one. Never "gave up after N attempts": that is a healthy item failed.
bool reason_fits(const expected_outcome& e, std::string_view reason, store_kind store);

}  // namespace dibs::chaos
