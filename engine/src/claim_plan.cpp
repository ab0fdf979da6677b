#include "claim_plan.hpp"

#include <algorithm>

namespace dibs {

std::size_t items_to_claim(const claim_view& v) {
  if (v.probe) return v.ready == 0 ? 1 : 0;
  const std::size_t kept = v.in_flight + v.ready + v.rerun + (v.circuit_closed ? 0 : v.waiting);
  const std::size_t wanted = v.limit + v.ahead;
  const std::size_t fits = kept < wanted ? wanted - kept : 0;
  const bool starving = v.ready == 0 && v.in_flight < v.limit;
  const bool room = v.ready < v.ahead && fits > 0 && (starving || fits >= (v.ahead + 1) / 2) &&
                    v.unwritten < v.unwritten_limit;
  return room ? std::min(v.ahead, fits) : 0;
}

}  // namespace dibs
