#include "lease_verdicts.hpp"

#include "bson_read.hpp"
#include "protocol.hpp"
#include "ids.hpp"

namespace dibs::mongo {

namespace {

lease_state read_state(const bson_t* d, const std::string& prefix) {
  lease_state s;
  if (auto t = read_i64(d, prefix + "token")) {
    s.has_token = true;
    s.token = static_cast<std::uint64_t>(*t);
  }
  s.by = read_str(d, prefix + "by");
  bson_iter_t it, child;
  if (bson_iter_init(&it, d) && bson_iter_find_descendant(&it, (prefix + "until").c_str(), &child) &&
      BSON_ITER_HOLDS_DATE_TIME(&child))
    s.until = store_time{} + millis(bson_iter_date_time(&child));
  return s;
}

bool ours(const lease_ref& r, const lease_state& s) { return s.has_token && s.token == r.token && s.by == r.by; }

}  // namespace

lease_states document_states(const std::vector<bson_ptr>& docs, const field_names& f) {
  lease_states out;
  for (const auto& d : docs) {
    auto id = doc_id(d.get());
    if (!id) continue;
    auto s = read_state(d.get(), f.lock + ".");
    s.target_set = has_path(d.get(), f.target, true);
    s.failed = has_path(d.get(), f.lock_failed());
    out[id_to_text(id->value())] = s;
  }
  return out;
}

lease_states lock_states(const std::vector<bson_ptr>& locks) {
  lease_states out;
  for (const auto& d : locks)
    if (auto id = doc_id(d.get())) out[id_to_text(id->value())] = read_state(d.get(), "");
  return out;
}

bool looks_applied(fenced_write kind, const lease_ref& ref, const lease_state& s) {
  switch (kind) {
    case fenced_write::completion: return s.target_set && !s.has_token;
    case fenced_write::lock_completion: return s.target_set;
    case fenced_write::renewal: return ours(ref, s);
    // Released at once (no token), or kept for a retry: its holder's name, the token given back.
    case fenced_write::release:
      return !s.has_token || ours(ref, s) || (s.token == given_back_token && s.by == ref.by);
    case fenced_write::failure: return s.failed && !s.has_token;
  }
  return false;
}

std::vector<std::string> attribute_lost(fenced_write kind, const std::vector<lease_ref>& refs, std::int64_t matched,
                                        const lease_states& states) {
  const auto shortfall = static_cast<std::int64_t>(refs.size()) - matched;
  if (shortfall <= 0) return {};
  std::vector<std::string> sure, maybe;
  for (const auto& r : refs) {
    auto it = states.find(r.id);
    if (it == states.end() || !looks_applied(kind, r, it->second)) sure.push_back(r.id);
    else maybe.push_back(r.id);
  }
  std::vector<std::string> out;
  for (auto* list : {&sure, &maybe})
    for (auto& id : *list)
      if (static_cast<std::int64_t>(out.size()) < shortfall) out.push_back(id);
  return out;
}

std::vector<std::size_t> held_locks(const std::vector<lease_ref>& refs, const lease_states& locks,
                                    std::optional<store_time> live_at, std::vector<std::string>& lost) {
  std::vector<std::size_t> held;
  for (std::size_t k = 0; k < refs.size(); ++k) {
    auto it = locks.find(refs[k].id);
    if (it != locks.end() && ours(refs[k], it->second) && (!live_at || it->second.until >= *live_at)) held.push_back(k);
    else lost.push_back(refs[k].id);
  }
  return held;
}

}  // namespace dibs::mongo
