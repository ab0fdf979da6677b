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
  // A whole batch ahead once half of one fits: claims of what is left over (the limit plus the
  // batch, less what runs) cost the store a claim's round trips for a few dozen rows. An adaptive
  // limit the store keeps below its ceiling (the API finishes items faster than they are claimed)
  // made MongoDB batch claims 64 rows each, 0.10-0.12 store commands an item instead of 0.055.
  return room ? v.ahead : 0;
}

std::size_t claim_ahead(std::size_t limit, std::size_t batch, double per_second, std::chrono::duration<double> horizon) {
  // Nothing measured yet: a whole batch, as a shard without a limit of its own claims. The limit
  // is then still in its slow start, far under what the API will take; claims sized to it were
  // the run's first dozen claims of 1-46 rows. (Items in hand are safe in an outage: the probes
  // take an item that had its first answer in turn with fresh ones, shard::take_probe.)
  if (per_second <= 0) return std::max<std::size_t>(batch, 1);
  const auto soon = static_cast<std::size_t>(per_second * horizon.count());
  return std::clamp<std::size_t>(std::max(soon, limit), 1, std::max<std::size_t>(batch, 1));
}

double finish_rate::per_second(clock::time_point now) {
  const auto window = rate_ == 0 ? std::chrono::milliseconds(50) : std::chrono::milliseconds(500);
  if (now - since_ < window) return rate_;
  const double rate = static_cast<double>(finished_ - finished_then_) / std::chrono::duration<double>(now - since_).count();
  rate_ = rate_ == 0 ? rate : (rate_ + rate) / 2;
  finished_then_ = finished_;
  since_ = now;
  return rate_;
}

}  // namespace dibs
