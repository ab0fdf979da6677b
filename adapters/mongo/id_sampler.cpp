#include "id_sampler.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "random_token.hpp"

#include <algorithm>

namespace dibs::mongo {

u128 oid_number(const bson_oid_t& o) {
  u128 v = 0;
  for (unsigned char b : o.bytes) v = (v << 8) | b;
  return v;
}

bson_oid_t oid_from_number(u128 v) {
  bson_oid_t o;
  for (int i = 11; i >= 0; --i) {
    o.bytes[i] = static_cast<uint8_t>(v & 0xff);
    v >>= 8;
  }
  return o;
}

bson_oid_t pivot_between(u128 lo, u128 hi, u128 r) { return oid_from_number(lo + r % (hi - lo + 1)); }

bool id_sampler::learn_range(mongoc_collection_t* coll, const bson_t* filter) {
  auto proj = id_projection();
  auto lo = find_docs(coll, filter, find_opts(proj.get(), 1, "_id", 1).get(), "reading the smallest pending _id");
  // Nothing pending: no range to learn, and nothing to sample. The next claim looks again (one
  // find), where a range learned empty would have sent it to read from the head (two more).
  if (lo.empty()) return false;
  auto hi = find_docs(coll, filter, find_opts(proj.get(), 1, "_id", -1).get(), "reading the largest pending _id");
  if (hi.empty()) return true;  // taken meanwhile: read from the head this once, learn again next time
  std::lock_guard lock(mutex_);
  known_ = true;
  is_oid_ = false;
  claims_since_learned_ = 0;
  auto a = doc_id(lo[0].get());
  auto b = doc_id(hi[0].get());
  if (a && b && a->value().value_type == BSON_TYPE_OID && b->value().value_type == BSON_TYPE_OID) {
    is_oid_ = true;
    min_ = oid_number(a->value().value.v_oid);
    max_ = oid_number(b->value().value.v_oid);
  }
  return true;
}

void id_sampler::shrink_top(u128 to) {
  std::lock_guard lock(mutex_);
  if (to >= max_) return;
  max_ = to;
  // Documents come back above it (retries come due, leases expire, --follow's new ones have
  // higher ids): they are reached only from pivots just below it, so the range is read again
  // within a few claims rather than after 256.
  claims_since_learned_ = std::max(claims_since_learned_, relearn_after - relearn_after_shrink);
}

void id_sampler::forget_range() {
  std::lock_guard lock(mutex_);
  known_ = false;
}

std::vector<bson_ptr> id_sampler::sample(mongoc_collection_t* coll, const bson_t* filter, const bson_t* proj,
                                         std::int64_t limit) {
  bool known;
  {
    std::lock_guard lock(mutex_);
    if (known_ && ++claims_since_learned_ > relearn_after) known_ = false;  // the pending set moves on
    known = known_;
  }
  if (!known && !learn_range(coll, filter)) return {};
  bool is_oid;
  u128 lo, hi;
  {
    std::lock_guard lock(mutex_);
    is_oid = is_oid_ && known_;
    lo = min_;
    hi = max_;
  }
  if (!is_oid || hi <= lo) return find_docs(coll, filter, find_opts(proj, limit).get(), "finding candidates");

  const bson_oid_t pivot = pivot_between(lo, hi, random_u128());
  auto with_bound = [&](const char* op) {
    auto b = make_bson();
    bson_concat(b.get(), filter);
    bson_t c;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "_id", &c);
    BSON_APPEND_OID(&c, op, &pivot);
    bson_append_document_end(b.get(), &c);
    return b;
  };
  auto out = find_docs(coll, with_bound("$gte").get(), find_opts(proj, limit, "_id", 1).get(), "finding candidates");
  if (static_cast<std::int64_t>(out.size()) < limit) {
    // Fewer than `limit` claimable above the pivot, so above any higher pivot too, for now: pivots
    // stay below it until the range is read again, where one find fills a claim. Without this a
    // run's later claims wrapped around in two finds ever more often as the pending set thinned
    // (2,000 documents: 5-11 of 20 claims).
    shrink_top(oid_number(pivot));
    auto more = find_docs(coll, with_bound("$lt").get(),
                          find_opts(proj, limit - static_cast<std::int64_t>(out.size()), "_id", 1).get(),
                          "finding candidates");
    for (auto& d : more) out.push_back(std::move(d));
    if (out.empty()) forget_range();
  }
  return out;
}

}  // namespace dibs::mongo
