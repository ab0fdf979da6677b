#include "fenced_rows.hpp"

namespace dibs::mysql {

fence_plan plan_fence(const std::vector<lease_ref>& refs, const row_key& key, const quote_fn& quote) {
  fence_plan plan;
  std::map<std::string, std::size_t> query_of;  // by -> index in plan.queries
  for (const auto& r : refs) {
    auto row = key_literal(key, r.id, quote);
    plan.row.push_back(row);
    if (!row) continue;
    auto [it, fresh] = query_of.emplace(r.by, plan.queries.size());
    if (fresh) plan.queries.push_back(held_query{r.by, {}});
    plan.queries[it->second].rows.push_back(row_ref{*row, r.token});
  }
  return plan;
}

const held_query* single_fence(const fence_plan& plan, bool exact) {
  if (plan.queries.size() != 1) return nullptr;
  const auto& q = plan.queries.front();
  if (!exact) return &q;
  if (q.rows.size() != plan.row.size()) return nullptr;  // an id that names no row
  std::unordered_set<std::string> distinct;
  for (const auto& r : q.rows)
    if (!distinct.insert(r.key).second) return nullptr;
  return &q;
}

fence_outcome settle_fence(const fence_plan& plan, const std::vector<lease_ref>& refs,
                           const std::unordered_set<std::string>& locked) {
  fence_outcome out;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const auto& row = plan.row[i];
    if (row && locked.count(refs[i].id)) {
      out.held.push_back(row);
      ++out.applied;
    } else {
      out.held.push_back(std::nullopt);
      out.lost.push_back(refs[i].id);
    }
  }
  return out;
}

completion_split split_storable(const std::vector<completion>& batch, bool keep_answers, const server_limits& lim) {
  completion_split out;
  for (const auto& x : batch) {
    // The escaped answer is at most twice its size, plus the quotes.
    auto why = keep_answers ? unstorable_answer(x.result_json, 2 * x.result_json.size() + 2, lim) : std::nullopt;
    if (why) out.refused.emplace_back(x.ref.id, std::move(*why));
    else out.storable.push_back(x);
  }
  return out;
}

std::vector<std::size_t> statement_runs(const std::vector<std::size_t>& quoted_bytes, std::size_t max_statement_bytes) {
  std::vector<std::size_t> runs;
  std::size_t in_run = 0, bytes = 0;
  for (const auto size : quoted_bytes) {
    if (in_run > 0 && bytes + size > max_statement_bytes / 2) {
      runs.push_back(in_run);
      in_run = 0;
      bytes = 0;
    }
    bytes += size + 32;  // the answer, its id and the CASE's words around it
    ++in_run;
  }
  if (in_run > 0) runs.push_back(in_run);
  return runs;
}

std::map<release_group, std::vector<std::string>> release_groups(const std::vector<release_item>& batch,
                                                                 const fence_outcome& fence) {
  std::map<release_group, std::vector<std::string>> groups;
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (const auto row = fence.held[i])
      groups[{batch[i].delay.count() * 1000, batch[i].why, batch[i].not_attempted}].push_back(*row);
  return groups;
}

}  // namespace dibs::mysql
