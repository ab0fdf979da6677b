// The claim protocol as MongoDB documents: every filter and update that the adapter sends is
// built here by a plain function, so unit tests can read them without a server.
//
// Document states (target = the field the API result goes to, lock = the lease field):
//   pending   target null, no lock.token, no lock.failed   (lock may keep {attempts, until: epoch})
//   leased    target null, lock {by, token, until, attempts}
//   done      target set, no lock (exactly the seed's shape)
//   failed    target null, lock {attempts, failed: {reason, httpStatus, at}}
//   foreign   target null, lock holds anything but a document: never claimed, counted as failed
#pragma once

#include <adapters/mongo/bson_ptr.hpp>
#include <dibs/stores/mongo_names.hpp>

#include <dibs/job.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dibs::mongo {

// The token of a lease its holder gave back for a retry (release_update): a real token is never
// 0, so no write of the holder's matches it any more.
constexpr std::uint64_t given_back_token = 0;

// The times a claim holds a lease's `until` against, by any reading of the server's clock. A
// lease still held is taken over once it ran out before `expired` (server now - grace); one given
// back for a retry is due once `until` is before `due` (server now), with no grace: the grace
// guards a holder still at work, and nobody is at work on it.
struct claim_cutoffs {
  store_time expired;
  store_time due;
};
inline claim_cutoffs cutoffs_at(store_time server_now, millis grace) { return {server_now - grace, server_now}; }
// Whether a lease running out at `until` is claimable at `cut` (given back for a retry or not).
inline bool claimable_at(store_time until, bool given_back, const claim_cutoffs& cut) {
  return until < (given_back ? cut.due : cut.expired);
}

// Pending, leased with `until` before `cut.expired`, or given back with `until` before
// `cut.due`; with `max_attempts` > 0, only documents claimed fewer times than that.
bson_ptr claimable_filter(const field_names& f, const claim_cutoffs& cut, int max_attempts = 0);
// The same, restricted to the given ids (batch strategy, second step).
bson_ptr claimable_filter_in(const field_names& f, const claim_cutoffs& cut, const std::vector<bson_value_t>& ids);
// The same, for the first claimable document at or after `from` (`_id: {$gte: from}`): one
// statement of a batch claim's bulk write (claim_batch.cpp).
bson_ptr claimable_filter_from(const field_names& f, const claim_cutoffs& cut, const bson_value_t& from,
                               int max_attempts = 0);
// What the claim filter with `max_attempts` leaves out: documents claimable but for their
// attempts, claimed that many times already (each lease ran out with no outcome written). A
// claim fails them (failure_update with exhausted_attempts_reason) rather than count an attempt
// past max_attempts.
bson_ptr exhausted_filter(const field_names& f, const claim_cutoffs& cut, int max_attempts);
// Sets the lease and counts the attempt.
bson_ptr lease_update(const field_names& f, const std::string& by, std::uint64_t token, store_time until);
// What a claim reads: _id, the source field and the attempt count.
bson_ptr claim_projection(const field_names& f);
// Items of one claim, found by its token.
bson_ptr token_filter(const field_names& f, std::uint64_t token);

// id AND by AND token (and, for a completion, until >= now).
bson_ptr fenced_filter(const field_names& f, const bson_value_t& id, const std::string& by, std::uint64_t token);
bson_ptr completion_filter(const field_names& f, const bson_value_t& id, const std::string& by, std::uint64_t token,
                           store_time now);
// Sets the target to `result` and removes the lock: the finished document has the seed's shape.
bson_ptr completion_update(const field_names& f, const bson_t* result);
bson_ptr renew_update(const field_names& f, store_time until);
// delay 0: drop by/token and set until to the epoch (claimable at once, attempts kept);
// otherwise keep the lease (its holder's name, token given_back_token) until `retry_at`, so
// nobody calls the API for it before then and a claim takes it once due.
bson_ptr release_update(const field_names& f, bool at_once, store_time retry_at, const std::string& why,
                        bool not_attempted = false);
bson_ptr failure_update(const field_names& f, const std::string& reason, int http_status, int attempts,
                        store_time now);

// A document whose lease field holds a value dibs did not write (false, a string, a number,
// null, an array: anything but a document) is never claimed nor written: the claim filters leave
// it out, and stats() counts it as failed (so a run ends). This filter finds them (target null).
bson_ptr foreign_lease_filter(const field_names& f);

// Counting filters for stats().
bson_ptr leased_filter(const field_names& f, store_time now, bool live);
bson_ptr done_filter(const field_names& f);
// {<target>.status: "fail"}: done with the API's "no data" answer (admin_store::no_data_count).
bson_ptr no_data_filter(const field_names& f);
bson_ptr failed_filter(const field_names& f);
// Only the failures dibs recorded (not foreign lease values): what `dibs retry` may reset (it
// unsets the lease field, which would erase a user's own value) and what failure reasons group.
bson_ptr recorded_failure_filter(const field_names& f);

// createIndexes specification: {<lock>.until: 1} partial on {<target>: null}.
bson_ptr claim_index_command(const std::string& collection, const field_names& f);

// The lock-collection strategy's documents: {_id: <doc id>, ts, by, token, until, attempts}.
bson_ptr lock_document(const bson_value_t& id, const std::string& by, std::uint64_t token, store_time now,
                       store_time until);
// {$or: [{<until>: {$lt: cut.expired}}, {<token>: given_back_token, <until>: {$lt: cut.due}}]}
// as `key` of `b`: a lease that ran out beyond the grace, or one given back for a retry and due
// (both strategies' claim filters).
void append_ran_out(bson_t* b, const char* key, const std::string& until_field, const std::string& token_field,
                    const claim_cutoffs& cut);
// Locks of `ids` claimable at `cut` (claimable_at); with `max_attempts` > 0, taken fewer times than
// that (or, `exhausted`, that many times or more: a claim fails their documents instead).
bson_ptr lock_takeover_filter(const std::vector<bson_value_t>& ids, const claim_cutoffs& cut, int max_attempts = 0,
                              bool exhausted = false);
// count_attempt false: the lock is taken to fail its document (at max_attempts), not to claim it.
bson_ptr lock_takeover_update(const std::string& by, std::uint64_t token, store_time now, store_time until,
                              bool count_attempt = true);
bson_ptr lock_fenced_filter(const bson_value_t& id, const std::string& by, std::uint64_t token);
bson_ptr lock_index_command(const std::string& lock_collection, std::int64_t ttl_seconds);
// Open documents: target null and not failed (lock-collection candidates, whose locks live
// elsewhere; and what stats() counts as open in one command, stats_counts.hpp).
bson_ptr unlocked_candidate_filter(const field_names& f);
// Adds `_id: {$in: ids}` to `filter`.
void append_id_in(bson_t* filter, const std::vector<bson_value_t>& ids);
bson_ptr id_in_filter(const std::vector<bson_value_t>& ids);
// Lock-collection: the document `id` while it is still open (target null, no failure recorded,
// the lease field absent or ours): the guard of its completion and of its failure. The lock is
// checked in another collection first, so this filter is what keeps a document to one final
// write: a holder paused between its check and its write, or a write sent again after its
// answer was lost, finds the document already finished and matches nothing.
bson_ptr open_document_filter(const field_names& f, const bson_value_t& id);
// Lock-collection: the locks of one claim; renewal; release (at once: claimable, attempts kept);
// live or expired leases for stats.
bson_ptr lock_token_filter(std::uint64_t token);
bson_ptr lock_renew_update(store_time now, store_time until);
bson_ptr lock_release_update(bool at_once, store_time retry_at, store_time now, const std::string& why,
                             bool not_attempted = false);
bson_ptr lock_leased_filter(store_time now, bool live);

}  // namespace dibs::mongo
