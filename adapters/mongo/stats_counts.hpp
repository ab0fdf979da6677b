// A MongoDB store's counts by state (`status`, and the engine's "is anything left?") are several
// count commands, not one snapshot: documents move between them. A document released by another
// worker between the count of pending documents and the count of leased ones was in neither, and a
// worker took the collection for drained while it was not (chaos: a worker ended early, exit 3).
// So the open documents (target null, no failure recorded) are counted in one command, and
// "pending" is what of them holds no lease: whatever moves meanwhile, an open document is counted.
#pragma once

#include <dibs/store.hpp>

#include <cstdint>
#include <functional>

namespace dibs::mongo {

// What one count command counts.
enum class doc_count { done, failed, leased_live, leased_expired, open };

// The stats from the counts, taken in this order: the leases first, then the open documents.
// `with_ends`: done and failed too (else left 0).
store_stats stats_from_counts(bool with_ends, const std::function<std::uint64_t(doc_count)>& count);

}  // namespace dibs::mongo
