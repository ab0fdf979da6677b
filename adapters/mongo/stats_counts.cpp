#include "stats_counts.hpp"

#include <algorithm>

namespace dibs::mongo {

store_stats stats_from_counts(bool with_ends, const std::function<std::uint64_t(doc_count)>& count) {
  store_stats s;
  if (with_ends) {
    s.done = count(doc_count::done);
    s.failed = count(doc_count::failed);
  }
  s.leased_live = count(doc_count::leased_live);
  s.leased_expired = count(doc_count::leased_expired);
  // Last, in one command: a lease that ended since it was counted is still open here (counted
  // twice at worst, which only means one more look); a document that ended meanwhile leaves
  // `open` short of the leases, hence the floor.
  const std::uint64_t open = count(doc_count::open);
  const std::uint64_t leased = s.leased_live + s.leased_expired;
  s.pending = open > leased ? open - leased : 0;
  return s;
}

}  // namespace dibs::mongo
