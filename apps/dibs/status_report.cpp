#include "status_report.hpp"

#include "adapters/http/budget/spend_budget.hpp"

#include "engine/src/json_text.hpp"
#include "engine/src/log_escape.hpp"

#include <algorithm>
#include <cstdio>

namespace dibs::cli {

namespace {
std::uint64_t done_with_data(const store_stats& s, std::optional<std::uint64_t> no_data) {
  return s.done - std::min(s.done, no_data.value_or(0));
}
}  // namespace

std::uint64_t retries_due(const std::vector<lease_holder>& holders) {
  std::uint64_t n = 0;
  for (const auto& h : holders)
    if (leases_renewed(h)) n += h.expired;
  return n;
}

std::string status_counts_line(const store_stats& s, std::optional<std::uint64_t> no_data, std::uint64_t retry_due) {
  retry_due = std::min(retry_due, s.leased_expired);
  return "status: pending=" + std::to_string(s.pending) + " leased_live=" + std::to_string(s.leased_live) +
         " leased_expired=" + std::to_string(s.leased_expired - retry_due) + " done=" + std::to_string(done_with_data(s, no_data)) +
         " failed=" + std::to_string(s.failed) + (retry_due > 0 ? " retry_due=" + std::to_string(retry_due) : std::string()) +
         (no_data.value_or(0) > 0 ? " no_data=" + std::to_string(*no_data) : std::string());
}

std::string failure_breakdown(const std::vector<failure_reason>& reasons) {
  if (reasons.empty()) return {};
  std::string out = "failed by reason (top " + std::to_string(reasons.size()) + "):\n";
  for (const auto& r : reasons) {
    // A reason is an API's or a server's words: control characters are shown escaped.
    out += "  " + std::to_string(r.count) + "  " + log::escape_controls(r.reason);
    if (!r.example_ids.empty()) {
      out += "  (e.g. ";
      for (std::size_t i = 0; i < r.example_ids.size(); ++i) out += (i ? ", " : "") + log::escape_controls(r.example_ids[i]);
      out += ")";
    }
    out += "\n";
  }
  return out;
}

namespace {
std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", s);
  return buf;
}
}  // namespace

std::string lease_table(const std::vector<lease_holder>& holders) {
  if (holders.empty()) return {};
  std::string out = "leases by worker:\n";
  for (const auto& h : holders) {
    out += "  " + log::escape_controls(h.by.empty() ? "(none)" : h.by) + "  " + std::to_string(h.leased) + " leased";
    // A worker that still renews is alive: its passed untils are retries that are due (admin_store.hpp).
    if (h.expired) out += ", " + std::to_string(h.expired) + (leases_renewed(h) ? " retry due" : " expired");
    out += h.earliest_until_s >= 0  ? "  (earliest until in " + seconds(h.earliest_until_s) + ")"
           : leases_renewed(h)      ? "  (a retry due for " + seconds(-h.earliest_until_s) + "; leases renewed)"
                                    : "  (earliest expired " + seconds(-h.earliest_until_s) + " ago)";
    out += "\n";
  }
  return out;
}

std::string lease_wait_note(const std::vector<lease_holder>& holders) {
  std::uint64_t live = 0;
  std::string who, first;
  double earliest = -1;
  for (const auto& h : holders) {
    if (h.leased <= h.expired) continue;
    live += h.leased - h.expired;
    const auto name = log::escape_controls(h.by.empty() ? "(none)" : h.by);
    who += (who.empty() ? "" : ", ") + name + " " + std::to_string(h.leased - h.expired);
    if (first.empty()) first = name;
    if (h.earliest_until_s >= 0 && (earliest < 0 || h.earliest_until_s < earliest)) earliest = h.earliest_until_s;
  }
  if (live == 0) return {};
  return std::to_string(live) + " item(s) are leased by other workers (" + who + ")" +
         (earliest >= 0 ? ", the first lease ending in " + seconds(earliest) : std::string()) +
         ": this run takes them when their leases end, and until then may show no progress for them. A worker "
         "that was killed keeps its leases that long; if it is gone, `dibs release --worker " + first +
         "` with this --store frees them now";
}

std::string status_json(const std::string& store, const store_stats& s, const std::vector<failure_reason>& reasons,
                        const std::vector<lease_holder>& holders, std::optional<std::uint64_t> no_data,
                        const std::vector<budget_record>& budgets) {
  const auto retry_due = std::min(retries_due(holders), s.leased_expired);
  std::string out = "{\"store\":" + json_string(store) + ",\"pending\":" + std::to_string(s.pending) +
                    ",\"leased_live\":" + std::to_string(s.leased_live) +
                    ",\"leased_expired\":" + std::to_string(s.leased_expired - retry_due) +
                    ",\"retry_due\":" + std::to_string(retry_due) +
                    ",\"done\":" + std::to_string(done_with_data(s, no_data)) + ",\"failed\":" + std::to_string(s.failed);
  if (no_data) out += ",\"no_data\":" + std::to_string(*no_data);
  out += ",\"failure_reasons\":[";
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    const auto& r = reasons[i];
    out += (i ? ",{" : "{");
    out += "\"reason\":" + json_string(r.reason) + ",\"count\":" + std::to_string(r.count) + ",\"example_ids\":[";
    for (std::size_t k = 0; k < r.example_ids.size(); ++k) out += (k ? "," : "") + json_string(r.example_ids[k]);
    out += "]}";
  }
  out += "],\"lease_holders\":[";
  for (std::size_t i = 0; i < holders.size(); ++i) {
    const auto& h = holders[i];
    char until[32], latest[32];
    std::snprintf(until, sizeof until, "%.3f", h.earliest_until_s);
    std::snprintf(latest, sizeof latest, "%.3f", h.latest_until_s);
    out += (i ? ",{" : "{");
    out += "\"by\":" + json_string(h.by) + ",\"leased\":" + std::to_string(h.leased) +
           ",\"expired\":" + std::to_string(h.expired) + ",\"earliest_until_s\":" + until +
           ",\"latest_until_s\":" + latest + ",\"renewing\":" + (leases_renewed(h) ? "true" : "false") + "}";
  }
  out += "],\"budgets\":[";
  for (std::size_t i = 0; i < budgets.size(); ++i) {
    const auto& b = budgets[i];
    const auto left = b.limit > b.used ? b.limit - b.used : 0;
    const bool money = http::money_key(b.key);  // kept in millionths of a dollar: said in dollars
    const auto amount = [money](std::uint64_t n) {
      if (!money) return std::to_string(n);
      char text[40];
      std::snprintf(text, sizeof text, "%.6f", static_cast<double>(n) / 1e6);
      return std::string(text);
    };
    out += (i ? ",{" : "{");
    out += "\"key\":" + json_string(b.key) + ",\"unit\":" + (money ? "\"usd\"" : "\"calls\"") + ",\"used\":" + amount(b.used) +
           ",\"limit\":" + amount(b.limit) + ",\"left\":" + amount(left) + "}";
  }
  return out + "]}";
}

}  // namespace dibs::cli
