#include "held_leases.hpp"

#include <unordered_set>

namespace dibs {

bool held_leases::add(const job& j, clock::time_point asked, clock::time_point now, std::chrono::milliseconds lease,
                      const std::string& own_by) {
  auto [it, inserted] = leases_.try_emplace(j.id);
  held_lease fresh;
  fresh.token = j.token;
  if (j.by != own_by) fresh.by = j.by;
  fresh.renew_due = asked + lease / 2;
  fresh.claimed_at = now;
  fresh.attempts = j.attempts;
  it->second = std::move(fresh);
  return inserted;
}

held_lease* held_leases::find(const std::string& id) {
  const auto it = leases_.find(id);
  return it == leases_.end() ? nullptr : &it->second;
}

const held_lease* held_leases::find(const std::string& id) const {
  const auto it = leases_.find(id);
  return it == leases_.end() ? nullptr : &it->second;
}

held_lease* held_leases::under(const std::string& id, std::uint64_t token) {
  auto* h = find(id);
  return h && h->token == token ? h : nullptr;
}

const held_lease* held_leases::under(const std::string& id, std::uint64_t token) const {
  const auto* h = find(id);
  return h && h->token == token ? h : nullptr;
}

bool held_leases::kept(const std::string& id, std::uint64_t token) const {
  const auto* h = under(id, token);
  return h && !h->lost;
}

bool held_leases::forget(const std::string& id, std::uint64_t token) {
  const auto it = leases_.find(id);
  if (it == leases_.end() || it->second.token != token) return false;
  leases_.erase(it);
  return true;
}

std::vector<renewal> held_leases::due(clock::time_point now, const std::string& by) const {
  std::vector<renewal> out;
  for (const auto& [id, h] : leases_)
    if (!h.lost && h.renew_due <= now) out.push_back(renewal{lease_ref{id, h.by.empty() ? by : h.by, h.token}});
  return out;
}

void held_leases::renewed(const std::vector<renewal>& sent, const std::vector<std::string>& lost,
                          clock::time_point asked, std::chrono::milliseconds lease) {
  const std::unordered_set<std::string> lost_ids(lost.begin(), lost.end());
  for (const auto& x : sent) {
    auto* h = under(x.ref.id, x.ref.token);
    if (!h) continue;
    if (lost_ids.count(x.ref.id)) {
      // Only in-flight items can lose a lease here; for settled ones the write itself tells.
      if (!h->settled) h->lost = true;
    } else {
      h->renew_due = asked + lease / 2;
    }
  }
}

}  // namespace dibs
