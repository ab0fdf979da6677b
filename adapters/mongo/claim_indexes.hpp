// The claim index of a collection, as the server lists it, and what dibs makes of it: which
// target its partial filter reads (dibs init moves an index made for another target, so it never
// keeps serving the old one), and whether an earlier dibs left one for its default lease field,
// `lock` (the collection then goes on with that field: mongo_names.hpp). The decisions are pure
// (tests/unit/test_mongo_protocol.cpp); listing and dropping are the store's calls.
#pragma once

#include <dibs/stores/mongo_names.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dibs::mongo {

struct store_context;

// One index as listIndexes tells it: its name, and the field its partialFilterExpression names
// first ("" when it has none).
struct index_fact {
  std::string name;
  std::string partial_field;
};

// The claim index's name for the lease field `f.lock`: dibs_claim_<lock>_until.
std::string claim_index_name(const field_names& f);
bool has_index(const std::vector<index_fact>& indexes, const std::string& name);
// The target the claim index of `f` reads when it is another than f.target (made for an earlier
// target); nullopt when there is no such index, or it reads f.target (or nothing we can tell).
std::optional<std::string> stale_claim_index(const std::vector<index_fact>& indexes, const field_names& f);
// Whether a collection whose lease field nobody named keeps an earlier dibs's default: the claim
// index of `lock` is there, and none for the default of now.
bool earlier_lock_field_in_use(const std::vector<index_fact>& indexes);

// The collection's indexes (none for a collection that is not there).
std::vector<index_fact> list_indexes(store_context& ctx);
void drop_index(store_context& ctx, const std::string& name);
// Throws std::invalid_argument when a document of the collection has the lease field (dibs
// init, when nothing says the field is dibs's): dibs would overwrite the user's value.
void require_free_lease_field(store_context& ctx);

}  // namespace dibs::mongo
