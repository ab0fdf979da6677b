// What both lease keepers do around their fenced bulk writes: parse the batch's ids, convert the
// completions' results to BSON, and, when a write matched fewer than it sent, read the lease
// states back and let lease_verdicts.hpp name the lost items.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/collection_ops.hpp>
#include <adapters/mongo/ids.hpp>
#include <adapters/mongo/lease_verdicts.hpp>
#include <adapters/mongo/write_errors.hpp>

#include <dibs/store.hpp>

#include <string>
#include <vector>

namespace dibs::mongo {

// A batch's items (those `keep` accepts) with their parsed ids; an item whose id doesn't parse
// can't be ours: its id goes to `lost`.
template <class Item>
struct parsed_batch {
  std::vector<lease_ref> refs;
  std::vector<owned_id> ids;
  std::vector<const Item*> items;
};
template <class Item, class Keep = bool (*)(const Item&)>
parsed_batch<Item> parse_batch(const std::vector<Item>& batch, std::vector<std::string>& lost,
                               Keep keep = [](const Item&) { return true; }) {
  parsed_batch<Item> p;
  for (const auto& x : batch) {
    if (!keep(x)) continue;
    if (auto id = id_from_text(x.ref.id)) {
      p.ids.push_back(*id);
      p.refs.push_back(x.ref);
      p.items.push_back(&x);
    } else {
      lost.push_back(x.ref.id);
    }
  }
  return p;
}

// One fenced update per item of `p` whose index `which` lists (the overload: every item):
// `write(k, item)` makes item k's {filter, update}.
template <class Item, class Write>
std::vector<fenced_update> writes_for(const parsed_batch<Item>& p, const std::vector<std::size_t>& which, Write write) {
  std::vector<fenced_update> out;
  for (const auto k : which) out.push_back(write(k, *p.items[k]));
  return out;
}
template <class Item, class Write>
std::vector<fenced_update> writes_for(const parsed_batch<Item>& p, Write write) {
  std::vector<std::size_t> every(p.refs.size());
  for (std::size_t k = 0; k < every.size(); ++k) every[k] = k;
  return writes_for(p, every, write);
}

// A bulk of renewals `out` answered: the ones it matched renewed until `until`; one the server
// refused did not extend the lease, so to the engine it is lost (and warned of). Returns the
// renewals sent (the refused ones left out), for lost_documents / lost_locks to check.
std::vector<lease_ref> settle_renewals(const std::vector<lease_ref>& refs, const bulk_verdict& out, store_time until,
                                       renew_result& res);

// Every completion's result as BSON, index for index; a result BSON can't hold (or over the
// document limit) is null, and refused with the reason (the engine fails it, fenced like any
// failure).
std::vector<bson_ptr> results_as_bson(const std::vector<completion>& batch, refusals& refused);

// A batch of completions parsed: each result as BSON (`results`, index for index with the batch;
// a result BSON can't hold is refused in `res`), and the items whose result converted and whose id
// parses (`items`; the others' ids go to res.lost).
struct parsed_completions {
  std::vector<bson_ptr> results;
  parsed_batch<completion> items;
  const bson_t* result_of(const std::vector<completion>& batch, const completion& item) const {
    return results[static_cast<std::size_t>(&item - batch.data())].get();
  }
};
parsed_completions parse_completions(const std::vector<completion>& batch, write_result& res);

// Logs one warning per refused item.
void warn_each(const refusals& refused, const char* what);

// The lease states of `refs`' documents (`<lock>.` fields) or locks.
lease_states read_document_states(mongoc_collection_t* coll, const std::vector<lease_ref>& refs, const field_names& f);
lease_states read_lock_states(mongoc_collection_t* locks, const std::vector<lease_ref>& refs);

// The items of `sent` that lost their lease when a `kind` write of them matched `matched`: no
// round trip when nothing is short.
std::vector<std::string> lost_documents(fenced_write kind, mongoc_collection_t* coll, const std::vector<lease_ref>& sent,
                                        std::int64_t matched, const field_names& f);
std::vector<std::string> lost_locks(fenced_write kind, mongoc_collection_t* locks, const std::vector<lease_ref>& sent,
                                    std::int64_t matched);

}  // namespace dibs::mongo
