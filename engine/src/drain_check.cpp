#include "drain_check.hpp"

namespace dibs {

drain_verdict drain_from_open_count(std::optional<std::uint64_t> open, std::uint64_t held) {
  if (!open) return drain_verdict::count_states;
  if (*open == 0) return drain_verdict::drained;
  // open = pending + leased live + leased expired: beyond what we hold, one of them is not ours.
  if (*open > held) return drain_verdict::more_to_do;
  // No more open than this process holds: another shard of it holds items, and looks again
  // itself before it ends (its claim comes back empty first). Whatever else is open, that shard
  // takes it, or its look (with nothing held, the open count exact) says so.
  return drain_verdict::drained;
}

bool drained_by_stats(const store_stats& s, std::uint64_t held) {
  return s.pending == 0 && s.leased_expired == 0 && s.leased_live <= held;
}

}  // namespace dibs
