#include "control_slots.hpp"

#include <algorithm>

namespace dibs::http {

std::size_t control_slots::of_peer(const std::string& peer) const {
  return static_cast<std::size_t>(
      std::count_if(slots_.begin(), slots_.end(), [&](const auto& s) { return s.second.peer == peer; }));
}

std::optional<control_slots::id> control_slots::victim(const std::string* peer) const {
  std::map<std::string, std::size_t> held;  // connections per peer (at most `total_` entries)
  for (const auto& [_, s] : slots_) ++held[s.peer];
  // `a` is dropped before `b`: its peer holds more, it is idle (b is not), or it has waited longer.
  auto first = [&](const slot& a, const slot& b) {
    if (held[a.peer] != held[b.peer]) return held[a.peer] > held[b.peer];
    if ((a.st == state::idle) != (b.st == state::idle)) return a.st == state::idle;
    return a.since < b.since;
  };
  std::optional<id> best;
  for (const auto& [which, s] : slots_) {
    if (s.st == state::answering || (peer && s.peer != *peer)) continue;
    if (!best || first(s, slots_.at(*best))) best = which;
  }
  return best;
}

control_slots::verdict control_slots::admit(const std::string& peer) const {
  verdict v;
  if (of_peer(peer) >= per_peer_) {  // its own longest-waiting one gives way, never another peer's
    v.evict = victim(&peer);
    v.admit = v.evict.has_value();
    return v;
  }
  if (slots_.size() < total_) {
    v.admit = true;
    return v;
  }
  v.evict = victim(nullptr);
  v.admit = v.evict.has_value();
  return v;
}

control_slots::id control_slots::add(const std::string& peer, clock::time_point now) {
  const id which = next_++;
  slots_[which] = slot{peer, state::idle, now};
  return which;
}

void control_slots::set(id which, state s, clock::time_point now) {
  const auto it = slots_.find(which);
  if (it == slots_.end()) return;
  it->second.st = s;
  it->second.since = now;
}

void control_slots::remove(id which) { slots_.erase(which); }

}  // namespace dibs::http
