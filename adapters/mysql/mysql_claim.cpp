// mysql_store's claim: one transaction from a random point of the pick key (mysql_protocol.hpp:
// claim_rows), the rows claimed max_attempts times failed instead of leased; a claim that lost
// its rows to another claimer at commit (Galera) counted as a claim conflict and run again.
#include "mysql_store_impl.hpp"

#include "claimed_rows.hpp"

#include "engine/src/reason_text.hpp"

#include <chrono>
#include <iterator>
#include <random>

namespace dibs::mysql {

namespace {
std::mt19937_64& rng() {
  thread_local std::mt19937_64 r{std::random_device{}()};
  return r;
}
std::uint64_t fresh_token() {
  std::uint64_t t;
  do t = rng()() >> 1; while (t == 0);  // BIGINT UNSIGNED holds it; >>1 keeps it printable as signed too
  return t;
}

// A claim that lost its rows (is_claim_conflict) is run again at once, from another random
// point, this many times in a row; then it comes back empty, and the engine's claim pacing
// waits before the next one (the rows it lost are another claimer's now: nothing is lost).
constexpr int claim_runs = 8;

}  // namespace

// One transaction: the rows are found and locked by one statement (claim_rows, SKIP LOCKED)
// from a random point of the pick key, then leased. Another claimer's rows are skipped while
// it holds them, so claimers on one server (the shards of this process and every other
// process) never meet: there is no candidate read that could go stale. On a Galera cluster
// SKIP LOCKED sees only the locks of its own node: two nodes may lease the same row, and the
// one that commits second fails certification (error 1213). Its transaction is rolled back
// whole, so it never hands out the row: the claim is counted as a conflict and run again.
std::vector<job> mysql_store::impl::claim(const claim_request& req) {
  for (int run = 1;; ++run) {
    try {
      return with_connection([&](mysql_connection& c) { return claim_once(c, req); }, 0);
    } catch (const sql_error& e) {
      if (!is_claim_conflict(e.code)) throw;
      claim_conflicts.fetch_add(1, std::memory_order_relaxed);
      log::debug("mysql: claim conflict (", e.what(), "); claiming again");
      if (run == claim_runs) return {};
    }
  }
}

std::vector<job> mysql_store::impl::claim_once(mysql_connection& c, const claim_request& req) {
  const auto grace = micros(req.grace);
  const auto lease = micros(req.lease);
  const int from = static_cast<int>(rng()() % 256);
  transaction tx(c);
  auto rows = c.select(claim_rows(names, grace, from, true, req.max, lease));
  if (rows.size() < req.max && from > 0) {
    auto more = c.select(claim_rows(names, grace, from, false, req.max - rows.size(), lease));
    rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  if (rows.empty()) return std::vector<job>{};  // nothing claimable now: the transaction rolls back
  std::vector<std::string> keys;
  std::vector<job> out;
  const auto token = fresh_token();
  const auto typed = sql_common::typed_read_of(names);  // once a claim, not once a row
  for (auto& r : rows) {
    // (A key is never NULL and always prints as a literal of its kind: the pick made sure.)
    const auto key = key_literal(names.key, r[0].value_or(""), quote_with(c));
    if (!key) continue;
    auto j = claimed_job(std::move(r), req.by, token, names.source, typed);
    // Claimed max_attempts times already (each lease ran out with no outcome): failed in this
    // transaction rather than leased again (claim_request::max_attempts).
    if (req.max_attempts > 0 && j.attempts > req.max_attempts) {
      c.execute(fail_row(names, *key, c.quote(exhausted_attempts_reason(j.attempts - 1)), 0));
      continue;
    }
    keys.push_back(*key);
    out.push_back(std::move(j));
  }
  if (keys.empty()) {
    tx.commit();  // the rows failed above, if any
    return std::vector<job>{};
  }
  c.execute(set_lease(names, keys, c.quote(req.by), token, lease));
  tx.commit();
  return out;
}

}  // namespace dibs::mysql
