// mysql_store's fenced writes (complete, renew, release, fail): each batch one transaction that
// locks the rows their lease still holds and writes exactly those (fenced_rows.hpp decides
// which), with the shortcuts of one statement where the server allows it.
#include "mysql_store_impl.hpp"

#include "fenced_rows.hpp"

#include <chrono>
#include <unordered_set>

namespace dibs::mysql {

// One fenced batch write: one transaction that locks the rows still held by their lease
// (plan_fence / settle_fence decide which), hands the verdict to `write`, and commits.
// `res.lost` names the others exactly.
template <class Result, class Item, class Write>
Result mysql_store::impl::fenced_batch(const std::vector<Item>& batch, bool live, Write write) {
  return with_connection([&](mysql_connection& c) {
    Result res;
    if (batch.empty()) return res;
    std::vector<lease_ref> refs;
    for (const auto& x : batch) refs.push_back(x.ref);
    const auto plan = plan_fence(refs, names.key, quote_with(c));
    transaction tx(c);
    std::unordered_set<std::string> locked;
    for (const auto& q : plan.queries)
      for (auto& r : c.select(held_rows(names, q.rows, c.quote(q.by), live))) locked.insert(r[0].value_or(""));
    auto fence = settle_fence(plan, refs, locked);
    write(c, fence, res);
    tx.commit();
    res.applied = fence.applied;
    res.lost = std::move(fence.lost);
    return res;
  });
}

// on_done delete on MariaDB, one worker's batch (a shard's always is): the fence and the
// delete are one autocommitted DELETE ... RETURNING, one round trip instead of four (START,
// the locking read, DELETE, COMMIT). The rows it names are the ones whose live lease held.
std::optional<write_result> mysql_store::impl::delete_returning(const std::vector<completion>& batch) {
  std::vector<lease_ref> refs;
  for (const auto& x : batch) refs.push_back(x.ref);
  return with_connection([&](mysql_connection& c) -> std::optional<write_result> {
    const auto plan = plan_fence(refs, names.key, quote_with(c));
    const auto* q = single_fence(plan, false);
    if (!q) return std::nullopt;
    std::unordered_set<std::string> deleted;
    for (auto& r : c.select(delete_held_rows(names, q->rows, c.quote(q->by)))) deleted.insert(r[0].value_or(""));
    auto fence = settle_fence(plan, refs, deleted);
    write_result res;
    res.applied = fence.applied;
    res.lost = std::move(fence.lost);
    return res;
  });
}

// on_done mark, a batch single_fence accepts (a shard's usually is), in one statement: the
// fence is the UPDATE's own WHERE. When it changed every row, every lease held and the
// transaction commits -- three round trips instead of four (no separate locking read); when
// it changed fewer, it rolls back and the batch goes the locking way, which names the lost.
std::optional<write_result> mysql_store::impl::complete_in_one(const std::vector<completion>& storable) {
  if (storable.empty()) return std::nullopt;
  std::vector<lease_ref> refs;
  for (const auto& x : storable) refs.push_back(x.ref);
  return with_connection([&](mysql_connection& c) -> std::optional<write_result> {
    const auto plan = plan_fence(refs, names.key, quote_with(c));
    const auto* q = single_fence(plan, true);
    if (!q) return std::nullopt;
    std::vector<std::string> results;
    for (const auto& x : storable) results.push_back(c.quote(x.result_json));
    const auto sql = complete_held_rows(names, q->rows, c.quote(q->by), results);
    if (sql.size() > limits.max_statement_bytes / 2) return std::nullopt;  // as statement_runs bounds each UPDATE
    transaction tx(c);
    c.execute(sql);
    if (c.affected() != storable.size()) return std::nullopt;  // rolled back by tx
    tx.commit();
    write_result res;
    res.applied = storable.size();
    return res;
  });
}

write_result mysql_store::impl::complete(const std::vector<completion>& batch) {
  if (opts.done == on_done::remove && limits.delete_returning && !batch.empty())
    if (auto res = delete_returning(batch)) return std::move(*res);
  // Answers the server can't hold are refused here, before any statement: the engine fails
  // them (fenced), and the rest goes out.
  auto split = split_storable(batch, opts.done != on_done::remove, limits);
  const auto& storable = split.storable;
  if (opts.done != on_done::remove) {
    if (auto res = complete_in_one(storable)) {
      res->refused = std::move(split.refused);
      return std::move(*res);
    }
  }
  auto res = fenced_batch<write_result>(storable, true, [&](mysql_connection& c, const fence_outcome& fence, write_result&) {
    std::vector<std::string> ids;
    std::vector<std::string> results;
    for (std::size_t i = 0; i < storable.size(); ++i) {
      if (!fence.held[i]) continue;
      ids.push_back(*fence.held[i]);
      if (opts.done != on_done::remove) results.push_back(c.quote(storable[i].result_json));
    }
    if (ids.empty()) return;
    if (opts.done == on_done::remove) {
      c.execute(delete_rows(names, ids));
      return;
    }
    // Statements stay under half of max_allowed_packet: several in one transaction if needed.
    std::vector<std::size_t> sizes;
    for (const auto& r : results) sizes.push_back(r.size());
    std::size_t at = 0;
    for (const auto n : statement_runs(sizes, limits.max_statement_bytes)) {
      const std::vector<std::string> run_ids(ids.begin() + at, ids.begin() + at + n);
      const std::vector<std::string> run_results(results.begin() + at, results.begin() + at + n);
      c.execute(complete_rows(names, run_ids, run_results));
      at += n;
    }
  });
  res.refused = std::move(split.refused);
  return res;
}

renew_result mysql_store::impl::renew(const std::vector<renewal>& batch, millis lease) {
  return fenced_batch<renew_result>(batch, false, [&](mysql_connection& c, const fence_outcome& fence, renew_result& res) {
    std::vector<std::string> ids;
    for (const auto& row : fence.held)
      if (row) ids.push_back(*row);
    if (!ids.empty()) c.execute(renew_rows(names, ids, micros(lease)));
    res.until.assign(ids.size(), store_clock::now() + lease);  // approximate: the engine keeps its own schedule
  });
}

write_result mysql_store::impl::release(const std::vector<release_item>& batch) {
  return fenced_batch<write_result>(batch, false, [&](mysql_connection& c, const fence_outcome& fence, write_result&) {
    for (auto& [group, ids] : release_groups(batch, fence))
      c.execute(release_rows(names, ids, group.delay_us, c.quote(group.why), group.not_attempted));
  });
}

write_result mysql_store::impl::fail(const std::vector<failure>& batch) {
  return fenced_batch<write_result>(batch, false, [&](mysql_connection& c, const fence_outcome& fence, write_result&) {
    for (std::size_t i = 0; i < batch.size(); ++i)
      if (const auto row = fence.held[i]) c.execute(fail_row(names, *row, c.quote(batch[i].reason), batch[i].http_status));
  });
}

}  // namespace dibs::mysql
