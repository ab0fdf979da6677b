// GET /workers, `dibs status`'s lease table and `dibs release worker` for MongoDB, with both
// lease layouts: the lease in the document (`lock: {by, token, until}`) or in the lock collection
// (`{_id: <doc id>, by, token, until}`). The filters are plain functions (unit-tested without a
// server); the blocking calls send them.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/admin_store.hpp>

#include <string>
#include <vector>

namespace dibs::mongo {

struct store_context;

// ^NAME(-[0-9]+)?$ with NAME's punctuation escaped: the leases of worker NAME (worker_owns).
std::string worker_by_regex(const std::string& name);
// Open documents whose lease in the document names the worker (live or expired).
bson_ptr worker_document_filter(const field_names& f, const std::string& name);
// Locks (lock collection) that name the worker.
bson_ptr worker_lock_filter(const std::string& name);

std::vector<lease_holder> lease_holders_blocking(store_context& ctx, bool lock_collection);
// Released as a delay-0 release is (by and token dropped, until the epoch: claimable at once,
// attempts kept). Returns how many leases it cleared.
std::uint64_t release_worker_blocking(store_context& ctx, bool lock_collection, const std::string& name);

}  // namespace dibs::mongo
