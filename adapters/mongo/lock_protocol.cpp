// The lock-collection strategy's documents and filters (declared in protocol.hpp): a lock per
// claimed document in a collection of its own, {_id: <doc id>, ts, by, token, until, attempts}.
#include "protocol.hpp"
#include "bson_parts.hpp"

namespace dibs::mongo {

bson_ptr lock_document(const bson_value_t& id, const std::string& by, std::uint64_t token, store_time now,
                       store_time until) {
  auto b = make_bson();
  bson_append_value(b.get(), "_id", 3, &id);
  BSON_APPEND_DATE_TIME(b.get(), "ts", ms(now));
  BSON_APPEND_UTF8(b.get(), "by", by.c_str());
  append_i64(b.get(), "token", token);
  BSON_APPEND_DATE_TIME(b.get(), "until", ms(until));
  BSON_APPEND_INT32(b.get(), "attempts", 1);
  return b;
}

bson_ptr lock_takeover_filter(const std::vector<bson_value_t>& ids, const claim_cutoffs& cut, int max_attempts,
                              bool exhausted) {
  auto b = make_bson();
  append_in(b.get(), "_id", ids);
  append_ran_out(b.get(), "$or", "until", "token", cut);
  bson_t c;
  if (max_attempts > 0) {
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "attempts", &c);
    BSON_APPEND_INT32(&c, exhausted ? "$gte" : "$lt", max_attempts);
    bson_append_document_end(b.get(), &c);
  }
  return b;
}

bson_ptr lock_takeover_update(const std::string& by, std::uint64_t token, store_time now, store_time until,
                              bool count_attempt) {
  auto b = make_bson();
  bson_t set, inc;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DATE_TIME(&set, "ts", ms(now));
  BSON_APPEND_UTF8(&set, "by", by.c_str());
  append_i64(&set, "token", token);
  BSON_APPEND_DATE_TIME(&set, "until", ms(until));
  bson_append_document_end(b.get(), &set);
  if (count_attempt) {
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$inc", &inc);
    BSON_APPEND_INT32(&inc, "attempts", 1);
    bson_append_document_end(b.get(), &inc);
  }
  return b;
}

bson_ptr lock_fenced_filter(const bson_value_t& id, const std::string& by, std::uint64_t token) {
  auto b = make_bson();
  bson_append_value(b.get(), "_id", 3, &id);
  BSON_APPEND_UTF8(b.get(), "by", by.c_str());
  append_i64(b.get(), "token", token);
  return b;
}

bson_ptr lock_index_command(const std::string& lock_collection, std::int64_t ttl_seconds) {
  auto b = make_bson();
  BSON_APPEND_UTF8(b.get(), "createIndexes", lock_collection.c_str());
  bson_t indexes, ttl, ttl_key, by, by_key;
  BSON_APPEND_ARRAY_BEGIN(b.get(), "indexes", &indexes);
  BSON_APPEND_DOCUMENT_BEGIN(&indexes, "0", &ttl);
  BSON_APPEND_DOCUMENT_BEGIN(&ttl, "key", &ttl_key);
  BSON_APPEND_INT32(&ttl_key, "ts", 1);
  bson_append_document_end(&ttl, &ttl_key);
  BSON_APPEND_UTF8(&ttl, "name", "dibs_lock_ttl");
  BSON_APPEND_INT64(&ttl, "expireAfterSeconds", ttl_seconds);
  bson_append_document_end(&indexes, &ttl);
  BSON_APPEND_DOCUMENT_BEGIN(&indexes, "1", &by);
  BSON_APPEND_DOCUMENT_BEGIN(&by, "key", &by_key);
  BSON_APPEND_INT32(&by_key, "by", 1);
  bson_append_document_end(&by, &by_key);
  BSON_APPEND_UTF8(&by, "name", "dibs_lock_by");
  bson_append_document_end(&indexes, &by);
  bson_append_array_end(b.get(), &indexes);
  return b;
}

void append_id_in(bson_t* filter, const std::vector<bson_value_t>& ids) { append_in(filter, "_id", ids); }

bson_ptr id_in_filter(const std::vector<bson_value_t>& ids) {
  auto b = make_bson();
  append_in(b.get(), "_id", ids);
  return b;
}

bson_ptr open_document_filter(const field_names& f, const bson_value_t& id) {
  auto b = make_bson();
  bson_append_value(b.get(), "_id", 3, &id);
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  append_exists(b.get(), f.lock_failed(), false);
  append_lease_field_ours(b.get(), "$or", f);
  return b;
}

bson_ptr lock_token_filter(std::uint64_t token) {
  auto b = make_bson();
  append_i64(b.get(), "token", token);
  return b;
}

bson_ptr lock_renew_update(store_time now, store_time until) {
  auto b = make_bson();
  bson_t set;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DATE_TIME(&set, "until", ms(until));
  BSON_APPEND_DATE_TIME(&set, "ts", ms(now));
  bson_append_document_end(b.get(), &set);
  return b;
}

bson_ptr lock_release_update(bool at_once, store_time retry_at, store_time now, const std::string& why,
                             bool not_attempted) {
  auto b = make_bson();
  bson_t set;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$set", &set);
  BSON_APPEND_DATE_TIME(&set, "until", at_once ? 0 : ms(retry_at));
  if (!at_once) append_i64(&set, "token", given_back_token);
  BSON_APPEND_DATE_TIME(&set, "ts", ms(now));
  if (!why.empty()) BSON_APPEND_UTF8(&set, "lastError", why.c_str());
  bson_append_document_end(b.get(), &set);
  if (not_attempted) {
    bson_t inc;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$inc", &inc);
    BSON_APPEND_INT32(&inc, "attempts", -1);
    bson_append_document_end(b.get(), &inc);
  }
  if (at_once) {
    bson_t unset;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$unset", &unset);
    BSON_APPEND_UTF8(&unset, "by", "");
    BSON_APPEND_UTF8(&unset, "token", "");
    bson_append_document_end(b.get(), &unset);
  }
  return b;
}

bson_ptr lock_leased_filter(store_time now, bool live) {
  auto b = make_bson();
  bson_t e, u;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "token", &e);
  BSON_APPEND_BOOL(&e, "$exists", true);
  bson_append_document_end(b.get(), &e);
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "until", &u);
  BSON_APPEND_DATE_TIME(&u, live ? "$gte" : "$lt", ms(now));
  bson_append_document_end(b.get(), &u);
  return b;
}

bson_ptr unlocked_candidate_filter(const field_names& f) {
  auto b = make_bson();
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  append_exists(b.get(), f.lock_failed(), false);
  append_lease_field_ours(b.get(), "$or", f);
  return b;
}

}  // namespace dibs::mongo
