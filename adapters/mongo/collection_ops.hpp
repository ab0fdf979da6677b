// The few collection operations every part of the store is made of, as plain blocking calls that
// throw mongo_error (naming `what`) when the driver fails.
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <adapters/mongo/write_errors.hpp>

#include <dibs/job.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dibs::mongo {

// find options: projection (may be null), limit (0 = none), an optional sort on one key.
bson_ptr find_opts(const bson_t* projection, std::int64_t limit, const char* sort_key = nullptr, int sort_dir = 1);
// {<path>: {$exists: true}}: the documents that have that field.
bson_ptr has_field_filter(const std::string& path);
// {_id: 1}, the projection of candidate reads.
bson_ptr id_projection();
// {ordered: false}: a bulk whose statements don't depend on each other.
bson_ptr unordered_opts();

std::vector<bson_ptr> find_docs(mongoc_collection_t* coll, const bson_t* filter, const bson_t* opts,
                                const std::string& what);
std::int64_t count_docs(mongoc_collection_t* coll, const bson_t* filter);

// One statement of a fenced bulk write.
struct fenced_update {
  bson_ptr filter;
  bson_ptr update;
};
// One unordered bulk of fenced updates (with `statement_opts`, e.g. {upsert: true}, on each).
// Statements the server refused (write errors) come back in the verdict; a failure of the whole
// write throws. No round trip for an empty batch.
bulk_verdict bulk_update(mongoc_collection_t* coll, const std::vector<fenced_update>& statements,
                         const std::string& what, const bson_t* statement_opts = nullptr);

// Removes the locks of `refs` (lock-collection), each fenced by by + token. A failure is only
// logged: the lock collection's TTL index removes what is left.
void remove_locks(mongoc_collection_t* locks, const std::vector<lease_ref>& refs);

// Runs a command whose failure the store can live with (index creation): logs it and goes on.
void run_optional_command(mongoc_client_t* client, const std::string& db, const bson_t* cmd, const std::string& what);

}  // namespace dibs::mongo
