// What a claim the store refused for what it writes means (store_refused from store::claim: a
// value too long or of the wrong type for its column, a constraint, a trigger of the table's):
// the same claim would be refused again, every second, forever -- so the run ends at once, with
// exit status 2 and this one line, as when a right is missing (engine::denied()). A claim that
// failed any other way (the store unreachable, a timeout) is tried again after the pacer's wait.
#pragma once

#include <string>

namespace dibs {

inline std::string claim_refusal(const std::string& store_says) {
  return "the store refuses the run's claims: " + store_says +
         " (a claim writes only the lease, the attempt count and, past max_attempts, a failure record: the table "
         "refuses one of them -- a column of another type or size, a constraint or a trigger of its own); no retry can "
         "help, so the run ends";
}

}  // namespace dibs
