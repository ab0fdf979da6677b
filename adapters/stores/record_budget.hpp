// The call budget kept in a store for every process (`budget N/day`; budget_store.hpp), over the
// store's own records (own_records.hpp): one record a key in dibs_budget, {used, budget_limit}.
#pragma once

#include <dibs/admin_store.hpp>
#include <dibs/stores/own_records.hpp>

#include "engine/src/budget_store.hpp"

#include <memory>

namespace dibs {

// nullptr for a store that keeps no records (a JSON Lines file). The table is made on first use.
std::shared_ptr<budget_store> open_budget(const std::shared_ptr<admin_store>& st);
std::shared_ptr<budget_store> budget_over(std::shared_ptr<own_records> records);

}  // namespace dibs
