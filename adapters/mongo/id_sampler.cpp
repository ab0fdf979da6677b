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

void id_sampler::learn_range(mongoc_collection_t* coll, const bson_t* filter, std::size_t want) {
  if (want == 0) want = 1;
  auto proj = id_projection();
  auto lo = find_docs(coll, filter, find_opts(proj.get(), static_cast<std::int64_t>(want), "_id", 1).get(),
                      "reading the smallest pending _id");
  // All of them already: the largest is the last; else one more read for it.
  auto hi = lo.size() < want ? std::vector<bson_ptr>{}
                             : find_docs(coll, filter, find_opts(proj.get(), 1, "_id", -1).get(),
                                         "reading the largest pending _id");
  const bson_t* last = !hi.empty() ? hi[0].get() : !lo.empty() ? lo.back().get() : nullptr;
  std::lock_guard lock(mutex_);
  known_ = true;
  is_oid_ = false;
  none_ = lo.empty() || !last;
  only_ = lo.size() < want ? lo.size() : 0;
  claims_since_learned_ = 0;
  if (none_) return;
  auto a = doc_id(lo[0].get());
  auto b = doc_id(last);
  if (a && b && a->value().value_type == BSON_TYPE_OID && b->value().value_type == BSON_TYPE_OID) {
    is_oid_ = true;
    min_ = oid_number(a->value().value.v_oid);
    max_ = oid_number(b->value().value.v_oid);
  }
}

void id_sampler::forget_range() {
  std::lock_guard lock(mutex_);
  known_ = false;
}

std::optional<id_sampler::claim_points> id_sampler::pivots(mongoc_collection_t* coll, const bson_t* filter,
                                                           std::size_t count) {
  bool known;
  {
    std::lock_guard lock(mutex_);
    // A queue seen empty or nearly so is read again every time: documents may have come (or
    // leases expired) since.
    if (known_ && (none_ || only_ > 0 || ++claims_since_learned_ > 256)) known_ = false;
    known = known_;
  }
  if (!known) learn_range(coll, filter, count);
  std::lock_guard lock(mutex_);
  if (none_) return std::nullopt;
  claim_points out;
  out.statements = only_ > 0 ? std::min(count, only_) : count;
  if (!is_oid_) return out;
  std::vector<u128> points;
  for (std::size_t i = 0; i < out.statements; ++i) points.push_back(oid_number(pivot_between(min_, max_, random_u128())));
  std::sort(points.begin(), points.end());
  for (const auto p : points) out.from.push_back(oid_from_number(p));
  return out;
}

std::vector<bson_ptr> id_sampler::sample(mongoc_collection_t* coll, const bson_t* filter, const bson_t* proj,
                                         std::int64_t limit) {
  bool known;
  {
    std::lock_guard lock(mutex_);
    if (known_ && ++claims_since_learned_ > 256) known_ = false;  // the pending set moves on
    known = known_;
  }
  if (!known) learn_range(coll, filter, 1);
  bool is_oid;
  u128 lo, hi;
  {
    std::lock_guard lock(mutex_);
    is_oid = is_oid_;
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
    auto more = find_docs(coll, with_bound("$lt").get(),
                          find_opts(proj, limit - static_cast<std::int64_t>(out.size()), "_id", 1).get(),
                          "finding candidates");
    for (auto& d : more) out.push_back(std::move(d));
    if (out.empty()) forget_range();
  }
  return out;
}

}  // namespace dibs::mongo
