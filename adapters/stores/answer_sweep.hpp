// The answers kept in a store expire (the run's answer expiry D): without a sweep, dibs_answers grows by
// every distinct request ever answered. A run removes the answers kept longer ago than D (by the
// store's clock) once, when it opens the store's answers; what a run with a longer answer_ttl
// would still have used goes too, so D is the user's to choose (none by default).
#pragma once

#include <dibs/admin_store.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace dibs {

// How many answers went; nullopt for a store that keeps none (a JSON Lines file). Throws the
// store's error.
std::optional<std::uint64_t> remove_expired_answers(const std::shared_ptr<admin_store>& st, std::chrono::milliseconds older_than);

}  // namespace dibs
