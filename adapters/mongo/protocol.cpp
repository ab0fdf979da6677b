#include "protocol.hpp"
#include "bson_parts.hpp"
#include "claim_indexes.hpp"

#include <chrono>

namespace dibs::mongo {

void append_ran_out(bson_t* b, const char* key, const std::string& until_field, const std::string& token_field,
                    const claim_cutoffs& cut) {
  bson_t ors, held, given, lt;
  BSON_APPEND_ARRAY_BEGIN(b, key, &ors);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "0", &held);
  BSON_APPEND_DOCUMENT_BEGIN(&held, until_field.c_str(), &lt);
  BSON_APPEND_DATE_TIME(&lt, "$lt", ms(cut.expired));
  bson_append_document_end(&held, &lt);
  bson_append_document_end(&ors, &held);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "1", &given);
  append_i64(&given, token_field, given_back_token);
  BSON_APPEND_DOCUMENT_BEGIN(&given, until_field.c_str(), &lt);
  BSON_APPEND_DATE_TIME(&lt, "$lt", ms(cut.due));
  bson_append_document_end(&given, &lt);
  bson_append_document_end(&ors, &given);
  bson_append_array_end(b, &ors);
}

namespace {
// {$or: [{<lock>.attempts: {$exists: false}}, {<lock>.attempts: {$lt|$gte: max}}]} (below), or
// {<lock>.attempts: {$gte: max}} (not below): claimed fewer times than `max_attempts`, or not.
void append_attempts(bson_t* b, const char* key, const field_names& f, int max_attempts, bool below) {
  bson_t cond;
  if (!below) {
    BSON_APPEND_DOCUMENT_BEGIN(b, f.lock_attempts().c_str(), &cond);
    BSON_APPEND_INT32(&cond, "$gte", max_attempts);
    bson_append_document_end(b, &cond);
    return;
  }
  bson_t ors, never, fewer, absent;
  BSON_APPEND_ARRAY_BEGIN(b, key, &ors);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "0", &never);
  BSON_APPEND_DOCUMENT_BEGIN(&never, f.lock_attempts().c_str(), &absent);
  BSON_APPEND_BOOL(&absent, "$exists", false);
  bson_append_document_end(&never, &absent);
  bson_append_document_end(&ors, &never);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "1", &fewer);
  BSON_APPEND_DOCUMENT_BEGIN(&fewer, f.lock_attempts().c_str(), &cond);
  BSON_APPEND_INT32(&cond, "$lt", max_attempts);
  bson_append_document_end(&fewer, &cond);
  bson_append_document_end(&ors, &fewer);
  bson_append_array_end(b, &ors);
}

// Open (target null, not failed), and pending, or leased and run out (append_ran_out); with
// `max_attempts` > 0, claimed fewer times than that (`exhausted`: that many times or more).
void append_claimable(bson_t* b, const field_names& f, const claim_cutoffs& cut, int max_attempts = 0,
                      bool exhausted = false) {
  BSON_APPEND_NULL(b, f.target.c_str());
  bson_t failed, ands, ours, leaseable, ors, b0, b1, until, tries;
  BSON_APPEND_DOCUMENT_BEGIN(b, f.lock_failed().c_str(), &failed);
  BSON_APPEND_BOOL(&failed, "$exists", false);
  bson_append_document_end(b, &failed);
  // The lease's time first: most documents a claim passes over are leased, and a matcher that
  // stops at the first false term (the test stand-in's) never looks further at them.
  BSON_APPEND_ARRAY_BEGIN(b, "$and", &ands);
  BSON_APPEND_DOCUMENT_BEGIN(&ands, "0", &leaseable);
  BSON_APPEND_ARRAY_BEGIN(&leaseable, "$or", &ors);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "0", &b0);  // never leased (the seed's shape)
  BSON_APPEND_DOCUMENT_BEGIN(&b0, f.lock_until().c_str(), &until);
  BSON_APPEND_BOOL(&until, "$exists", false);
  bson_append_document_end(&b0, &until);
  bson_append_document_end(&ors, &b0);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "1", &b1);  // released, or leased and run out (grace, or a retry due)
  append_ran_out(&b1, "$or", f.lock_until(), f.lock_token(), cut);
  bson_append_document_end(&ors, &b1);
  bson_append_array_end(&leaseable, &ors);
  bson_append_document_end(&ands, &leaseable);
  BSON_APPEND_DOCUMENT_BEGIN(&ands, "1", &ours);
  append_lease_field_ours(&ours, "$or", f);
  bson_append_document_end(&ands, &ours);
  if (max_attempts > 0) {
    BSON_APPEND_DOCUMENT_BEGIN(&ands, "2", &tries);
    append_attempts(&tries, "$or", f, max_attempts, !exhausted);
    bson_append_document_end(&ands, &tries);
  }
  bson_append_array_end(b, &ands);
}
}  // namespace

bson_ptr claimable_filter(const field_names& f, const claim_cutoffs& cut, int max_attempts) {
  auto b = make_bson();
  append_claimable(b.get(), f, cut, max_attempts);
  return b;
}

bson_ptr claimable_filter_in(const field_names& f, const claim_cutoffs& cut, const std::vector<bson_value_t>& ids) {
  auto b = make_bson();
  append_in(b.get(), "_id", ids);
  append_claimable(b.get(), f, cut);
  return b;
}

bson_ptr claimable_filter_from(const field_names& f, const claim_cutoffs& cut, const bson_value_t& from,
                               int max_attempts) {
  auto b = make_bson();
  bson_t range;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "_id", &range);
  BSON_APPEND_VALUE(&range, "$gte", &from);
  bson_append_document_end(b.get(), &range);
  append_claimable(b.get(), f, cut, max_attempts);
  return b;
}

bson_ptr exhausted_filter(const field_names& f, const claim_cutoffs& cut, int max_attempts) {
  auto b = make_bson();
  append_claimable(b.get(), f, cut, max_attempts, true);
  return b;
}

bson_ptr lease_update(const field_names& f, const std::string& by, std::uint64_t token, store_time until) {
  auto b = make_bson();
  bson_t set, inc;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_UTF8(&set, f.lock_by().c_str(), by.c_str());
  append_i64(&set, f.lock_token(), token);
  BSON_APPEND_DATE_TIME(&set, f.lock_until().c_str(), ms(until));
  bson_append_document_end(b.get(), &set);
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$inc", &inc);
  BSON_APPEND_INT32(&inc, f.lock_attempts().c_str(), 1);
  bson_append_document_end(b.get(), &inc);
  return b;
}

bson_ptr claim_projection(const field_names& f) {
  auto b = make_bson();
  BSON_APPEND_INT32(b.get(), "_id", 1);
  BSON_APPEND_INT32(b.get(), f.source.c_str(), 1);
  for (const auto& m : f.more) BSON_APPEND_INT32(b.get(), m.c_str(), 1);
  BSON_APPEND_INT32(b.get(), f.lock_attempts().c_str(), 1);
  return b;
}

bson_ptr token_filter(const field_names& f, std::uint64_t token) {
  auto b = make_bson();
  append_i64(b.get(), f.lock_token(), token);
  return b;
}

bson_ptr fenced_filter(const field_names& f, const bson_value_t& id, const std::string& by, std::uint64_t token) {
  auto b = make_bson();
  bson_append_value(b.get(), "_id", 3, &id);
  BSON_APPEND_UTF8(b.get(), f.lock_by().c_str(), by.c_str());
  append_i64(b.get(), f.lock_token(), token);
  return b;
}

bson_ptr completion_filter(const field_names& f, const bson_value_t& id, const std::string& by, std::uint64_t token,
                           store_time now) {
  auto b = fenced_filter(f, id, by, token);
  bson_t gte;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), f.lock_until().c_str(), &gte);
  BSON_APPEND_DATE_TIME(&gte, "$gte", ms(now));
  bson_append_document_end(b.get(), &gte);
  return b;
}

bson_ptr completion_update(const field_names& f, const bson_t* result) {
  auto b = make_bson();
  bson_t set, unset;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DOCUMENT(&set, f.target.c_str(), result);
  for (const auto& name : f.mapped) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, result, name.c_str())) bson_append_iter(&set, name.c_str(), static_cast<int>(name.size()), &it);
  }
  bson_append_document_end(b.get(), &set);
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$unset", &unset);
  BSON_APPEND_UTF8(&unset, f.lock.c_str(), "");
  bson_append_document_end(b.get(), &unset);
  return b;
}

bson_ptr renew_update(const field_names& f, store_time until) {
  auto b = make_bson();
  bson_t set;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DATE_TIME(&set, f.lock_until().c_str(), ms(until));
  bson_append_document_end(b.get(), &set);
  return b;
}

bson_ptr release_update(const field_names& f, bool at_once, store_time retry_at, const std::string& why,
                        bool not_attempted) {
  auto b = make_bson();
  bson_t set;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DATE_TIME(&set, f.lock_until().c_str(), at_once ? 0 : ms(retry_at));
  if (!at_once) append_i64(&set, f.lock_token(), given_back_token);
  if (!why.empty()) BSON_APPEND_UTF8(&set, (f.lock + ".lastError").c_str(), why.c_str());
  bson_append_document_end(b.get(), &set);
  if (not_attempted) {  // the claim's $inc taken back (its claim made it 1 at least)
    bson_t inc;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$inc", &inc);
    BSON_APPEND_INT32(&inc, f.lock_attempts().c_str(), -1);
    bson_append_document_end(b.get(), &inc);
  }
  if (at_once) {
    bson_t unset;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$unset", &unset);
    BSON_APPEND_UTF8(&unset, f.lock_by().c_str(), "");
    BSON_APPEND_UTF8(&unset, f.lock_token().c_str(), "");
    bson_append_document_end(b.get(), &unset);
  }
  return b;
}

bson_ptr failure_update(const field_names& f, const std::string& reason, int http_status, int attempts,
                        store_time now) {
  auto b = make_bson();
  bson_t set, failed, unset;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DOCUMENT_BEGIN(&set, f.lock_failed().c_str(), &failed);
  BSON_APPEND_UTF8(&failed, "reason", reason.c_str());
  BSON_APPEND_INT32(&failed, "httpStatus", http_status);
  BSON_APPEND_INT32(&failed, "attempts", attempts);
  BSON_APPEND_DATE_TIME(&failed, "at", ms(now));
  bson_append_document_end(&set, &failed);
  bson_append_document_end(b.get(), &set);
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$unset", &unset);
  BSON_APPEND_UTF8(&unset, f.lock_by().c_str(), "");
  BSON_APPEND_UTF8(&unset, f.lock_token().c_str(), "");
  BSON_APPEND_UTF8(&unset, f.lock_until().c_str(), "");
  bson_append_document_end(b.get(), &unset);
  return b;
}

namespace {
// {<lock>: {$exists: true, $not: {$type: "object"}}}: a value dibs did not write.
void append_foreign(bson_t* b, const field_names& f) {
  bson_t c, n;
  BSON_APPEND_DOCUMENT_BEGIN(b, f.lock.c_str(), &c);
  BSON_APPEND_BOOL(&c, "$exists", true);
  BSON_APPEND_DOCUMENT_BEGIN(&c, "$not", &n);
  BSON_APPEND_UTF8(&n, "$type", "object");
  bson_append_document_end(&c, &n);
  bson_append_document_end(b, &c);
}
}  // namespace

bson_ptr foreign_lease_filter(const field_names& f) {
  auto b = make_bson();
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  append_foreign(b.get(), f);
  return b;
}

bson_ptr leased_filter(const field_names& f, store_time now, bool live) {
  auto b = make_bson();
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  append_exists(b.get(), f.lock_failed(), false);
  append_exists(b.get(), f.lock_token(), true);
  bson_t c;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), f.lock_until().c_str(), &c);
  BSON_APPEND_DATE_TIME(&c, live ? "$gte" : "$lt", ms(now));
  bson_append_document_end(b.get(), &c);
  return b;
}

bson_ptr done_filter(const field_names& f) {
  auto b = make_bson();
  bson_t c;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), f.target.c_str(), &c);
  BSON_APPEND_NULL(&c, "$ne");
  bson_append_document_end(b.get(), &c);
  return b;
}

bson_ptr no_data_filter(const field_names& f) {
  auto b = make_bson();
  const std::string status = f.target + ".status";
  BSON_APPEND_UTF8(b.get(), status.c_str(), "fail");
  return b;
}

bson_ptr failed_filter(const field_names& f) {
  // A failure recorded, or a lease field dibs did not write (never claimed: counted here, so a
  // run ends and the user sees them).
  auto b = make_bson();
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  bson_t ors, recorded, foreign;
  BSON_APPEND_ARRAY_BEGIN(b.get(), "$or", &ors);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "0", &recorded);
  append_exists(&recorded, f.lock_failed(), true);
  bson_append_document_end(&ors, &recorded);
  BSON_APPEND_DOCUMENT_BEGIN(&ors, "1", &foreign);
  append_foreign(&foreign, f);
  bson_append_document_end(&ors, &foreign);
  bson_append_array_end(b.get(), &ors);
  return b;
}

bson_ptr recorded_failure_filter(const field_names& f) {
  auto b = make_bson();
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  append_exists(b.get(), f.lock_failed(), true);
  return b;
}

bson_ptr claim_index_command(const std::string& collection, const field_names& f) {
  auto b = make_bson();
  BSON_APPEND_UTF8(b.get(), "createIndexes", collection.c_str());
  bson_t indexes, index, key, partial;
  BSON_APPEND_ARRAY_BEGIN(b.get(), "indexes", &indexes);
  BSON_APPEND_DOCUMENT_BEGIN(&indexes, "0", &index);
  BSON_APPEND_DOCUMENT_BEGIN(&index, "key", &key);
  BSON_APPEND_INT32(&key, f.lock_until().c_str(), 1);
  bson_append_document_end(&index, &key);
  BSON_APPEND_UTF8(&index, "name", claim_index_name(f).c_str());
  BSON_APPEND_DOCUMENT_BEGIN(&index, "partialFilterExpression", &partial);
  BSON_APPEND_NULL(&partial, f.target.c_str());
  bson_append_document_end(&index, &partial);
  bson_append_document_end(&indexes, &index);
  bson_append_array_end(b.get(), &indexes);
  return b;
}

}  // namespace dibs::mongo
