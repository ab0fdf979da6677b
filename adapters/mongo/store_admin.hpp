// The store's administration: indexes, seeding, and the counts of `status` (stats), for each
// lease model. Blocking calls; they throw mongo_error, except index creation (logged).
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/store.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dibs::mongo {

struct store_context;

// {<lock>.until: 1} partial on {<target>: null}: the claim's query.
void create_claim_index(store_context& ctx);
// The lock collection's TTL index: only a backstop for abandoned locks (expiry is decided by `until`).
void create_lock_indexes(store_context& ctx);

// Inserts `n` documents {<source>: <random public IPv4>, <target>: null} (a dotted source nested,
// as a user's documents would have it), in chunks of 1000; returns how many were inserted.
std::size_t seed_documents(store_context& ctx, std::size_t n, std::uint64_t seed, std::size_t distinct);

// Throws dibs::missing_table_error (with the database's collections, and `advice`) unless the
// collection exists: dibs enrich and dibs status create none.
void require_collection(store_context& ctx, const std::string& advice);
// Throws dibs::missing_table_error (kind "field", with a document's names) when the collection has
// documents and none has the target field: dibs would take every one for pending (a misspelled
// or forgotten target). `init_command` is how to record a target that is new.
void require_target_field(store_context& ctx, const std::string& init_command);
// Documents whose lease field holds a value dibs did not write (protocol.hpp: foreign_lease_filter).
std::uint64_t count_foreign_leases(store_context& ctx);

// Documents open (pending or leased: target null, no failure recorded), in one count.
std::uint64_t count_open_documents(store_context& ctx);

// Done documents whose answer is the API's "no data" (protocol.hpp: no_data_filter).
std::uint64_t count_no_data(store_context& ctx);

// The filter of the open documents (protocol.hpp: unlocked_candidate_filter) among those the lock
// documents `locks` name: a lock can outlive its document's end (a holder killed between writing
// the document and removing its lock leaves it to the TTL index), and only an open document's
// lock is a lease.
bson_ptr open_documents_of(const std::vector<bson_ptr>& locks, const field_names& f);

// Counts of documents by state, the lease in the document.
store_stats document_lease_stats(store_context& ctx, bool with_ends = true);
// The same with the leases in the lock collection: only locks of open documents count.
store_stats lock_lease_stats(store_context& ctx, bool with_ends = true);

}  // namespace dibs::mongo
