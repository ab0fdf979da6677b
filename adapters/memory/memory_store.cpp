#include <dibs/stores/memory_store.hpp>

#include "engine/src/worker_id.hpp"

#include <map>
#include <unordered_set>

#include "engine/src/json_text.hpp"
#include <dibs/ipapi/ipv4_ranges.hpp>
#include "engine/src/reason_text.hpp"
#include <profiles/ipapi/skewed_draw.hpp>

#include <charconv>

namespace dibs {

namespace {
bool parse_index(const std::string& id, std::size_t size, std::size_t& index) {
  std::size_t n = 0;
  auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  if (ec != std::errc{} || p != id.data() + id.size() || n == 0 || n > size) return false;
  index = n - 1;
  return true;
}

std::int64_t millis_since_epoch(store_time t) {
  return std::chrono::duration_cast<millis>(t.time_since_epoch()).count();
}
}  // namespace

memory_store::memory_store(options opts) : opts_(std::move(opts)), token_rng_(std::random_device{}()) {}

std::string memory_store::add(job_field source) { return add(std::move(source), {}); }

std::string memory_store::add(job_field source, std::vector<job_field> more) {
  std::lock_guard lock(mutex_);
  source.name = opts_.source_field;
  records_.push_back(record{std::move(source), {}, {}, {}, {}, 0, 0, 0, std::move(more)});
  pending_.push_back(records_.size() - 1);
  return id_of(records_.size() - 1);
}

std::string memory_store::add(std::string source_value) {
  job_field f;
  f.st = job_field::state::string;
  f.value = std::move(source_value);
  return add(std::move(f));
}

void memory_store::seed_random_ips(std::size_t n, std::uint64_t seed, std::size_t distinct) {
  ipv4_draw draw(n, distinct, seed);
  std::lock_guard lock(mutex_);
  records_.reserve(records_.size() + n);
  for (std::size_t i = 0; i < n; ++i) {
    job_field f{opts_.source_field, job_field::state::string, ipv4_to_string(draw.next()), {}};
    records_.push_back(record{std::move(f), {}, {}, {}, {}, 0, 0});
    pending_.push_back(records_.size() - 1);
  }
}

std::size_t memory_store::size() const {
  std::lock_guard lock(mutex_);
  return records_.size();
}

memory_store::item memory_store::view(std::size_t i) const {
  const auto& r = records_[i];
  item out;
  static_cast<item_state&>(out) = r;
  out.id = id_of(i);
  return out;
}

std::optional<memory_store::item> memory_store::get(const std::string& id) const {
  std::lock_guard lock(mutex_);
  std::size_t i;
  if (!parse_index(id, records_.size(), i)) return std::nullopt;
  return view(i);
}

std::vector<memory_store::item> memory_store::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<item> out;
  out.reserve(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) out.push_back(view(i));
  return out;
}

std::string memory_store::document_json(const std::string& id) const {
  auto it = get(id);
  if (!it) return "null";
  std::string out = "{\"_id\": " + it->id;
  if (it->source.st == job_field::state::string) {
    out += ", ";
    append_json_string(out, opts_.source_field);
    out += ": ";
    append_json_string(out, it->source.value);
  }
  out += ", ";
  append_json_string(out, opts_.target_field);
  out += ": ";
  out += it->target_json ? *it->target_json : "null";
  if (it->lease) {
    out += ", ";
    append_json_string(out, opts_.lock_field);
    out += ": {\"by\": ";
    append_json_string(out, it->lease->by);
    out += ", \"token\": " + std::to_string(it->lease->token) +
           ", \"until\": " + std::to_string(millis_since_epoch(it->lease->until)) + "}";
  }
  if (it->failed) {
    out += ", \"failed\": {\"reason\": ";
    append_json_string(out, it->failed->reason);
    out += ", \"httpStatus\": " + std::to_string(it->failed->http_status) +
           ", \"attempts\": " + std::to_string(it->attempts) +
           ", \"at\": " + std::to_string(millis_since_epoch(it->failed->at)) + "}";
  }
  out += "}";
  return out;
}

memory_store::record* memory_store::holder(const lease_ref& ref, std::size_t& index) {
  if (!parse_index(ref.id, records_.size(), index)) return nullptr;
  auto& r = records_[index];
  if (!r.lease || r.lease->token != ref.token || r.lease->by != ref.by) return nullptr;
  return &r;
}

void memory_store::drop_lease(record& r, std::size_t index) {
  if (!r.lease) return;
  leases_of(*r.lease).erase(expiry_key{r.lease->until, index});
  r.lease.reset();
}

std::vector<job> memory_store::claim_now(const claim_request& req) {
  std::lock_guard lock(mutex_);
  const auto now = opts_.now();
  std::vector<job> out;
  out.reserve(std::min<std::size_t>(req.max, 1024));

  // An item claimed max_attempts times already is failed, not leased again (store.hpp).
  auto exhausted = [&](std::size_t i) {
    auto& r = records_[i];
    if (req.max_attempts <= 0 || r.attempts < req.max_attempts) return false;
    drop_lease(r, i);
    r.failed = failure_state{exhausted_attempts_reason(r.attempts), 0, now};
    r.last_error = r.failed->reason;
    ++failed_;
    return true;
  };
  auto take = [&](std::size_t i) {
    auto& r = records_[i];
    if (exhausted(i)) return;
    drop_lease(r, i);
    r.lease = lease_state{req.by, token_rng_() | 1, now + req.lease};  // never 0: 0 means "none"
    leased_.insert(expiry_key{r.lease->until, i});
    ++r.attempts;
    out.push_back(job{id_of(i), req.by, r.lease->token, r.lease->until, r.attempts, {r.source}});
    out.back().fields.insert(out.back().fields.end(), r.more.begin(), r.more.end());
  };

  while (out.size() < req.max && !pending_.empty()) {
    const auto i = pending_.front();
    pending_.pop_front();
    const auto& r = records_[i];
    if (r.target_json || r.failed || r.lease) continue;  // a stale queue entry
    take(i);
  }
  // Then the retries that are due: their holder gave them back, no grace to wait (with it, a
  // retry 30 ms away waited a second more, and a run's last retries made its tail).
  while (out.size() < req.max && !retrying_.empty()) {
    const auto [until, i] = *retrying_.begin();
    if (until > now) break;
    take(i);
  }
  // Then take over leases that expired more than the grace ago.
  while (out.size() < req.max && !leased_.empty()) {
    const auto [until, i] = *leased_.begin();
    if (until + req.grace >= now) break;
    take(i);
  }
  return out;
}

// The shape of every fenced batch write: under the lock, at one reading of the clock, each item
// whose lease still holds (and is live, when `live`) goes to `apply`, the others are lost.
template <class Result, class Item, class Apply>
Result memory_store::fenced_batch(const std::vector<Item>& batch, bool live, Apply apply) {
  std::lock_guard lock(mutex_);
  const auto now = opts_.now();
  Result res;
  for (const auto& x : batch) {
    std::size_t i;
    auto* r = holder(x.ref, i);
    if (!r || (live && r->lease->until < now)) {
      res.lost.push_back(x.ref.id);
      continue;
    }
    apply(x, *r, i, now, res);
    ++res.applied;
  }
  return res;
}

void memory_store::move_lease(record& r, std::size_t index, store_time until, bool retrying) {
  leases_of(*r.lease).erase(expiry_key{r.lease->until, index});
  r.lease->until = until;
  r.lease->retrying = retrying;
  leases_of(*r.lease).insert(expiry_key{until, index});
}

write_result memory_store::complete_now(const std::vector<completion>& batch) {
  {
    // Counted at the door, before the fence: what was sent, not what was kept.
    std::lock_guard lock(mutex_);
    for (const auto& c : batch)
      if (std::size_t i; parse_index(c.ref.id, records_.size(), i)) ++records_[i].write_attempts;
  }
  return fenced_batch<write_result>(batch, true, [&](const completion& c, record& r, std::size_t i, store_time, write_result&) {
    drop_lease(r, i);
    r.target_json = opts_.keep_results ? c.result_json : std::string();
    ++r.writes;
    ++done_;
  });
}

renew_result memory_store::renew_now(const std::vector<renewal>& batch, millis lease) {
  return fenced_batch<renew_result>(batch, false, [&](const renewal&, record& r, std::size_t i, store_time now, renew_result& res) {
    // A renewal sent before its holder gave the item back for a retry (the JSON Lines store runs
    // its calls on a pool, so it may land after): the retry's time stands. Moved, it waited a
    // whole lease and the grace.
    if (!r.lease->retrying) move_lease(r, i, now + lease);
    res.until.push_back(r.lease->until);
  });
}

write_result memory_store::release_now(const std::vector<release_item>& batch) {
  return fenced_batch<write_result>(batch, false, [&](const release_item& x, record& r, std::size_t i, store_time now, write_result&) {
    if (!x.why.empty()) r.last_error = x.why;
    if (x.not_attempted && r.attempts > 0) --r.attempts;
    if (x.delay.count() <= 0) {
      drop_lease(r, i);
      pending_.push_back(i);
    } else {
      // Keep the lease until the retry time (a stale write of its holder's is still fenced);
      // claimable at now + delay.
      move_lease(r, i, now + x.delay, true);
    }
  });
}

write_result memory_store::fail_now(const std::vector<failure>& batch) {
  return fenced_batch<write_result>(batch, false, [&](const failure& x, record& r, std::size_t i, store_time now, write_result&) {
    drop_lease(r, i);
    r.failed = failure_state{x.reason, x.http_status, now};
    r.last_error = x.reason;
    ++failed_;
  });
}

store_stats memory_store::stats_now() const {
  std::lock_guard lock(mutex_);
  const auto now = opts_.now();
  store_stats s;
  s.done = done_;
  s.failed = failed_;
  for (const auto* set : {&leased_, &retrying_})
    for (const auto& [until, i] : *set) (until >= now ? s.leased_live : s.leased_expired)++;
  s.pending = records_.size() - done_ - failed_ - s.leased_live - s.leased_expired;
  return s;
}

std::vector<lease_holder> memory_store::lease_holders_now() const {
  std::lock_guard lock(mutex_);
  const auto now = opts_.now();
  std::map<std::string, lease_holder> by;
  for (const auto* set : {&leased_, &retrying_})
    for (const auto& [until, i] : *set) {
      auto& h = by[records_[i].lease->by];
      const double in_s = std::chrono::duration<double>(until - now).count();
      if (h.leased == 0) {
        h.by = records_[i].lease->by;
        h.earliest_until_s = h.latest_until_s = in_s;
      }
      h.earliest_until_s = std::min(h.earliest_until_s, in_s);
      h.latest_until_s = std::max(h.latest_until_s, in_s);
      ++h.leased;
      if (until < now) ++h.expired;
    }
  std::vector<lease_holder> out;
  for (auto& [k, h] : by) out.push_back(std::move(h));
  return out;
}

std::uint64_t memory_store::release_worker_now(const std::string& name) {
  std::lock_guard lock(mutex_);
  std::vector<std::size_t> owned;
  for (const auto* set : {&leased_, &retrying_})
    for (const auto& [until, i] : *set)
      if (worker_owns(records_[i].lease->by, name)) owned.push_back(i);
  for (const auto i : owned) {
    drop_lease(records_[i], i);  // attempts kept, as on an expiry (admin_store.hpp)
    pending_.push_back(i);
  }
  return owned.size();
}

awaitable<std::vector<job>> memory_store::claim(claim_request req) { co_return claim_now(req); }
awaitable<write_result> memory_store::complete(std::vector<completion> b) { co_return complete_now(b); }
awaitable<renew_result> memory_store::renew(std::vector<renewal> b, millis lease) { co_return renew_now(b, lease); }
awaitable<write_result> memory_store::release(std::vector<release_item> b) { co_return release_now(b); }
awaitable<write_result> memory_store::fail(std::vector<failure> b) { co_return fail_now(b); }
awaitable<store_stats> memory_store::stats() { co_return stats_now(); }

std::vector<std::size_t> memory_store::failed_indexes(const retry_filter& which) const {
  const auto now = opts_.now();
  const std::unordered_set<std::string> ids(which.ids.begin(), which.ids.end());
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const auto& f = records_[i].failed;
    if (!f) continue;
    if (!which.reason_contains.empty() && f->reason.find(which.reason_contains) == std::string::npos) continue;
    if (which.reason_is && f->reason != *which.reason_is) continue;
    if (which.since && f->at < *which.since) continue;
    if (which.since_ago && f->at < now - std::chrono::duration_cast<store_time::duration>(*which.since_ago)) continue;
    if (!id_selected(ids, id_of(i))) continue;
    out.push_back(i);
  }
  return out;
}

std::vector<failed_item> memory_store::failed_now(const retry_filter& which) const {
  std::lock_guard lock(mutex_);
  std::vector<failed_item> out;
  for (const auto i : failed_indexes(which)) {
    const auto& r = records_[i];
    failed_item f;
    f.id = id_of(i);
    if (r.source.st == job_field::state::string) f.source = r.source.value;
    f.reason = r.failed->reason;
    f.http_status = r.failed->http_status;
    f.attempts = r.attempts;
    f.failed_at = r.failed->at;
    out.push_back(std::move(f));
  }
  return out;
}

std::uint64_t memory_store::retry_failed_now(const retry_filter& which) {
  std::lock_guard lock(mutex_);
  const auto selected = failed_indexes(which);
  for (const auto i : selected) {
    auto& r = records_[i];
    r.failed.reset();
    r.last_error.clear();
    r.attempts = 0;
    --failed_;
    pending_.push_back(i);
  }
  return selected.size();
}

}  // namespace dibs
