// What `dibs status` prints, as pure functions (unit-tested): the counts line, the failure
// breakdown, and the one JSON object of `--json`.
#pragma once

#include "engine/src/budget_store.hpp"

#include <dibs/admin_store.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::cli {

// The leases whose until has passed that are a live worker's retries due (retries_due, from the
// lease holders: a worker that still renews gave those items back for a retry whose time has
// come), not a dead worker's expired leases.
std::uint64_t retries_due(const std::vector<lease_holder>& holders);
// "status: pending=.. leased_live=.. leased_expired=.. done=.. failed=.." and, when there are
// some, " retry_due=..": the passed leases that are a live worker's retries (`retry_due` of
// s.leased_expired, which then counts only the others), and " no_data=..": the done items whose
// answer is the API's "no data", counted apart from done (so the counts still add up to the items).
std::string status_counts_line(const store_stats& s, std::optional<std::uint64_t> no_data = std::nullopt,
                               std::uint64_t retry_due = 0);
// "failed by reason (top N):" then "  COUNT  REASON  (e.g. ID, ID)" per reason; "" when none.
std::string failure_breakdown(const std::vector<failure_reason>& reasons);
// "leases by worker:" then "  BY  LEASED leased[, N expired | N retry due]  (earliest until in Xs | expired Xs ago)"
// ("retry due" for a worker that still renews: items it gave back for a retry whose time has come)
// per holder; "" when none. A worker whose every lease has expired is likely dead: `dibs release`.
std::string lease_table(const std::vector<lease_holder>& holders);
// Said when a run starts while other workers hold live leases (a run killed with -9 keeps its
// leases until they end, and this run's progress stands still meanwhile): which workers, until
// when, and that `dibs release` frees a dead one's now. "" when no lease is live.
std::string lease_wait_note(const std::vector<lease_holder>& holders);
// {"store":..,"pending":..,"leased_live":..,"leased_expired":..,"retry_due":..,"done":..,"failed":..,["no_data":..,]
//  "failure_reasons":[{"reason":..,"count":..,"example_ids":[..]}],
//  "lease_holders":[{"by":..,"leased":..,"expired":..,"earliest_until_s":..,"latest_until_s":..,"renewing":bool}]}
// ("renewing": its latest until is ahead, leases_renewed: a live worker, whose passed untils are due retries)
// (leased_expired without the retries due the holders show: retries_due)
//  "budgets":[{"key":..,"unit":"calls"|"usd","used":..,"limit":..,"left":..}] (the store's dibs_budget; "usd":
//  in dollars, a budget in money)
std::string status_json(const std::string& store, const store_stats& s, const std::vector<failure_reason>& reasons,
                        const std::vector<lease_holder>& holders = {}, std::optional<std::uint64_t> no_data = std::nullopt,
                        const std::vector<budget_record>& budgets = {});

}  // namespace dibs::cli
