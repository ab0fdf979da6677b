// The small pieces the claim protocol's documents (protocol.cpp) and the lock collection's
// (lock_protocol.cpp) are built of.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/job.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dibs::mongo {

// A store time as BSON's milliseconds since the epoch.
std::int64_t ms(store_time t);
// `key`: `v` as an int64 (tokens are random bits: their sign means nothing).
void append_i64(bson_t* b, const std::string& key, std::uint64_t v);
// `key`: {$in: ids}.
void append_in(bson_t* parent, const char* key, const std::vector<bson_value_t>& ids);
// `key`: [{<lock>: {$exists: false}}, {<lock>: {$type: "object"}}] (an $or's array): the lease
// field absent or a document (dibs's own shape).
void append_lease_field_ours(bson_t* b, const char* key, const field_names& f);
// `key`: {$exists: exists}.
void append_exists(bson_t* b, const std::string& key, bool exists);

}  // namespace dibs::mongo
