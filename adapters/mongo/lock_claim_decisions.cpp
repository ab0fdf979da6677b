#include "lock_claim_decisions.hpp"

#include "bson_read.hpp"
#include "ids.hpp"
#include "write_errors.hpp"

namespace dibs::mongo {

namespace {
constexpr std::int64_t duplicate_key = 11000;
}

std::unordered_map<std::string, lock_expiry> lock_expiries(const std::vector<bson_ptr>& locks) {
  std::unordered_map<std::string, lock_expiry> out;
  for (const auto& l : locks) {
    auto id = doc_id(l.get());
    if (!id) continue;
    lock_expiry e;
    bson_iter_t it;
    if (bson_iter_init_find(&it, l.get(), "until") && BSON_ITER_HOLDS_DATE_TIME(&it))
      e.until = store_time{} + millis(bson_iter_date_time(&it));
    e.given_back = bson_iter_init_find(&it, l.get(), "token") && BSON_ITER_HOLDS_INT(&it) &&
                   bson_iter_as_int64(&it) == static_cast<std::int64_t>(given_back_token);
    out[id_to_text(id->value())] = e;
  }
  return out;
}

lock_targets choose_lock_targets(const std::vector<std::string>& candidates,
                                 const std::unordered_map<std::string, lock_expiry>& locked_until,
                                 const claim_cutoffs& cut, std::size_t max,
                                 const std::unordered_set<std::string>& exhausted) {
  lock_targets t;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (t.free.size() + t.expired.size() >= max) break;
    if (exhausted.count(candidates[k])) continue;
    auto l = locked_until.find(candidates[k]);
    if (l == locked_until.end()) t.free.push_back(k);
    else if (claimable_at(l->second.until, l->second.given_back, cut)) t.expired.push_back(k);
  }
  return t;
}

std::unordered_set<std::string> exhausted_locks(const std::vector<bson_ptr>& locks, const claim_cutoffs& cut,
                                                int max_attempts) {
  std::unordered_set<std::string> out;
  if (max_attempts <= 0) return out;
  const auto expiry = lock_expiries(locks);
  for (const auto& l : locks) {
    const auto id = doc_id(l.get());
    if (!id) continue;
    const auto text = id_to_text(id->value());
    const auto& e = expiry.at(text);
    if (claimable_at(e.until, e.given_back, cut) && read_int(l.get(), "attempts", 1) >= max_attempts) out.insert(text);
  }
  return out;
}

lock_insert_verdict judge_lock_insert(const bson_t* reply, bool executed) {
  lock_insert_verdict v;
  for (const auto& e : write_errors_of(reply))
    if (e.code == duplicate_key) ++v.raced;
  v.failed = !executed && v.raced == 0;
  return v;
}

std::vector<lease_ref> stale_locks(const std::unordered_map<std::string, int>& held,
                                   const std::unordered_set<std::string>& open, const std::string& by,
                                   std::uint64_t token) {
  std::vector<lease_ref> out;
  for (const auto& [id, attempts] : held)
    if (!open.count(id)) out.push_back(lease_ref{id, by, token});
  return out;
}

}  // namespace dibs::mongo
