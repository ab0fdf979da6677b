// A budget's period: `budget 100000/day` or `N/month`, by UTC calendar days and months, so that
// every process on the store counts in the same one; and max_calls's, the run. Pure;
// unit-tested in tests/unit/test_call_budget.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace dibs::http {

enum class budget_span { run, day, month };

struct budget_limit {
  std::uint64_t calls = 0;
  budget_span span = budget_span::day;
};

// "100000/day", "5000/month" (also "/d", "/mo"); nullopt otherwise (0 calls included).
std::optional<budget_limit> parse_budget(const std::string& text);

// The period `now` falls in: "day 2026-11-28", "month 2026-11", "run".
std::string period_name(budget_span span, std::chrono::system_clock::time_point now);
// When that period ends and the budget renews (a run's never does: the epoch).
std::chrono::system_clock::time_point renews_at(budget_span span, std::chrono::system_clock::time_point now);
// "2026-11-29 00:00 UTC".
std::string utc_text(std::chrono::system_clock::time_point t);

}  // namespace dibs::http
