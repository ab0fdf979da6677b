// Sans-io: what the documents read back say about a fenced batch write that matched fewer items
// than it sent. The store reads the lease state of the batch's documents (or locks) only then,
// and these functions decide which items lost their lease; no server is involved, so unit tests
// feed them documents directly.
//
// The matched count of a bulk write is exact but says nothing of which statements missed. A
// document whose state shows the write can't have applied (another token holds it, or it is gone)
// is surely lost; one whose state looks like the write applied may be ours or may have been
// finished by a later holder. The shortfall is filled with the sure ones first, then the others:
// the count is exact, the attribution best effort.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/job.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dibs::mongo {

// A document's lease as read back: from its lease field (`<lock>.by`...), or, for the
// lock-collection strategy, from a lock document (by, token, until at its top level).
struct lease_state {
  bool has_token = false;
  std::uint64_t token = 0;
  std::string by;
  store_time until{};
  bool target_set = false;  // documents only: the result was written
  bool failed = false;      // documents only: a failure was recorded
};
using lease_states = std::unordered_map<std::string, lease_state>;  // by id text

lease_states document_states(const std::vector<bson_ptr>& docs, const field_names& f);
lease_states lock_states(const std::vector<bson_ptr>& locks);

// Which write a batch was; each reads "looks applied" differently.
enum class fenced_write {
  completion,       // the result is set and the lease gone
  lock_completion,  // lock-collection: the result is set (the lock lives elsewhere)
  renewal,          // the lease is still ours
  release,          // the lease is gone or still ours (a delayed release keeps it)
  failure,          // the failure is recorded and the lease gone
};

// Whether `state` is what the write of `ref` would have left.
bool looks_applied(fenced_write kind, const lease_ref& ref, const lease_state& state);

// The ids of `refs` (the statements sent, none refused) that lost their lease, given that
// `matched` of them matched and `states` is what was read back. Empty when nothing is short.
std::vector<std::string> attribute_lost(fenced_write kind, const std::vector<lease_ref>& refs, std::int64_t matched,
                                        const lease_states& states);

// Whether a batch of `sent` statements that matched `matched` needs its states read at all.
inline bool something_lost(std::size_t sent, std::int64_t matched) { return static_cast<std::int64_t>(sent) > matched; }

// Lock-collection: the indexes of `refs` whose lock is still ours (and, with `live_at`, not
// expired then); the ids of the others are appended to `lost`.
std::vector<std::size_t> held_locks(const std::vector<lease_ref>& refs, const lease_states& locks,
                                    std::optional<store_time> live_at, std::vector<std::string>& lost);

}  // namespace dibs::mongo
