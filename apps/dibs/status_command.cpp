// `dibs status`: the store's counts by state, and its failures by reason (the most frequent
// first, with example ids), as text or as one JSON object (`--json`) for scripts.
#include "commands.hpp"
#include "file_mode_output.hpp"
#include "status_report.hpp"
#include "store_flags.hpp"

#include "engine/src/budget_store.hpp"
#include "adapters/http/budget/spend_budget.hpp"

#include <dibs/log.hpp>
#include <adapters/stores/record_budget.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>

namespace dibs::cli {

command add_status_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "status", "Count documents by state (pending, leased live/expired, done, failed) and failures by reason");
  struct flags {
    store_flags store;
    bool json = false;
    std::size_t top = 10;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, true);
  sub->add_flag("--json", f->json,
                "print one JSON object: the counts, failure_reasons [{reason, count, example_ids}] and lease_holders "
                "[{by, leased, expired, earliest_until_s, latest_until_s, renewing}]");
  sub->add_option("--top", f->top, "how many failure reasons to show, the most frequent first")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000}))
      ->capture_default_str();
  sub->footer(
      "Examples:\n"
      "  dibs status --store 'mongodb://127.0.0.1:27017/test?collection=message'\n"
      "  MYSQL_PWD=... dibs status --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --json\n"
      "  dibs status --store jsonl:in.jsonl --out out.jsonl");
  return [f] {
    f->store.uri_to_connect();  // a flag that can't apply (--password-file on a file) is refused first, alone
    if (const auto note = find_file_mode_output(f->store); !note.empty()) log::warn(note);
    auto st = f->store.open(false);
    const auto s = st->stats_blocking();
    const auto reasons = s.failed > 0 && f->top > 0 ? st->failure_reasons(f->top) : std::vector<failure_reason>{};
    // Who holds the leases (dibs release --worker frees a dead one's); a store that can't tell: none.
    std::vector<lease_holder> holders;
    if (s.leased_live + s.leased_expired > 0) {
      try {
        holders = st->lease_holders();
      } catch (const std::invalid_argument&) {
      }
    }
    const auto no_data = s.done > 0 ? st->no_data_count() : std::optional<std::uint64_t>(std::nullopt);
    // The call budgets kept in the store (--budget): none where there is no dibs_budget yet.
    std::vector<budget_record> budgets;
    if (const auto kept = open_budget(st)) {
      try {
        budgets = kept->records();
      } catch (const std::exception&) {
      }
    }
    if (f->json) {
      std::printf("%s\n", status_json(st->describe(), s, reasons, holders, no_data, budgets).c_str());
      return 0;
    }
    // The counts stay the last line (scripts read it); the reasons and leases come before them.
    std::printf("%s\n", st->describe().c_str());
    std::printf("%s", failure_breakdown(reasons).c_str());
    std::printf("%s", lease_table(holders).c_str());
    for (const auto& b : budgets) {
      const auto left = b.limit > b.used ? b.limit - b.used : 0;
      if (http::money_key(b.key))  // a budget in money: millionths of a dollar
        std::printf("budget %s: %s of %s used, %s left\n", b.key.c_str(), http::dollars_text(b.used).c_str(),
                    http::dollars_text(b.limit).c_str(), http::dollars_text(left).c_str());
      else
        std::printf("budget %s: %llu of %llu calls used, %llu left\n", b.key.c_str(), static_cast<unsigned long long>(b.used),
                    static_cast<unsigned long long>(b.limit), static_cast<unsigned long long>(left));
    }
    std::printf("%s\n", status_counts_line(s, no_data, retries_due(holders)).c_str());
    return 0;
  };
}

}  // namespace dibs::cli
