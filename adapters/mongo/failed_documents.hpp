// `dibs retry` and the failure breakdown of `dibs status` for MongoDB: the filters, the update
// and the pipeline as plain functions (unit-tested without a server), and the blocking calls
// that send them.
//
// A failed document is `target: null, lock.failed: {reason, httpStatus, attempts, at}` (with
// every strategy: lock-collection writes the failure into the document and removes the lock).
// Put back, it loses its whole `lock` field, so it is exactly a seeded document again
// (attempts 0).
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/admin_store.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dibs::mongo {

struct store_context;

// `text` as a regular expression that matches exactly that text (ASCII punctuation escaped;
// other bytes, UTF-8 included, kept).
std::string regex_literal(const std::string& text);
// Failed documents whose reason contains `reason_contains` ("" = any), is `reason_is` (when
// set; "" also matches a missing reason, as failure_reasons groups them) and that failed at or
// after `since` (when set).
// With `ids` (their text, as `dibs failed` writes them), only those documents.
bson_ptr failed_selection_filter(const field_names& f, const std::string& reason_contains,
                                 std::optional<store_time> since,
                                 const std::optional<std::string>& reason_is = std::nullopt,
                                 const std::vector<std::string>& ids = {});
// {$unset: {<lock>: ""}}: back to the seed's shape, pending, attempts 0.
bson_ptr retry_update(const field_names& f);
// $match failed, $group by reason (count, smallest and largest _id), most frequent first, top N.
bson_ptr failure_reasons_pipeline(const field_names& f, std::size_t top);

// Resets the failed documents `which` selects (`ago` measured by the server's clock); with
// `lock_collection`, first removes any lock a failed document still has there, so a put-back
// document is not held by a stale lock. Returns how many documents it reset.
std::uint64_t retry_failed_documents(store_context& ctx, const retry_filter& which, bool lock_collection);
std::vector<failure_reason> failure_reason_counts(store_context& ctx, std::size_t top);
// `dibs failed`: the failed documents `which` selects, oldest failure first, read with a cursor.
void list_failed_documents(store_context& ctx, const retry_filter& which, const std::function<void(const failed_item&)>& each);
// Whether the lock collection holds any lock (a lock-collection run's leases are there).
bool lock_collection_in_use(store_context& ctx);
// Whether the lock collection holds a lease (live or run out): a lock-collection run holds, or
// held, documents there. A lock given back keeps its record without one. A user whose role
// can't read it: false.
bool lock_collection_holds_leases(store_context& ctx);

}  // namespace dibs::mongo
