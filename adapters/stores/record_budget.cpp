#include "record_budget.hpp"

#include "record_swap.hpp"

#include <algorithm>

namespace dibs {

namespace {
const record_kind budget_kind{"dibs_budget", "budget_key", {"used", "budget_limit"}, {}, ""};

std::uint64_t count_of(std::int64_t n) { return n > 0 ? static_cast<std::uint64_t>(n) : 0; }

class record_budget final : public budget_store {
 public:
  explicit record_budget(std::shared_ptr<own_records> records) : records_(std::move(records)) {}

  // Takes never pass the limit however many processes take at once: a take is written only over
  // the `used` it was decided from.
  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override {
    budget_take out;
    swap_record(table(), key, [&](const record_read& r) {
      const auto used = r.record ? count_of(r.record->numbers[0]) : 0;
      out.granted = budget_grant(used, want, limit);
      out.used = used + out.granted;
      return std::optional(std::vector<std::int64_t>{static_cast<std::int64_t>(out.used), static_cast<std::int64_t>(limit)});
    });
    return out;
  }

  void give_back(const std::string& key, std::uint64_t n) override {
    if (n == 0) return;
    swap_record(table(), key, [&](const record_read& r) {
      if (!r.record) return std::optional<std::vector<std::int64_t>>();  // cleared by someone: nothing to give back to
      const auto used = count_of(r.record->numbers[0]);
      return std::optional(std::vector<std::int64_t>{static_cast<std::int64_t>(used > n ? used - n : 0), r.record->numbers[1]});
    });
  }

  std::vector<budget_record> records() override {
    std::vector<budget_record> out;
    // dibs status reads them: a store without the table yet has none (its error), and gets none made.
    for (const auto& r : records_->open_records(budget_kind, false)->list())
      out.push_back({r.key, r.numbers.empty() ? 0 : count_of(r.numbers[0]), r.numbers.size() < 2 ? 0 : count_of(r.numbers[1])});
    return out;
  }

 private:
  // Made on the first take, not when the run starts: a run that never takes adds no table.
  record_table& table() {
    if (!table_) table_ = records_->open_records(budget_kind);
    return *table_;
  }

  std::shared_ptr<own_records> records_;
  std::shared_ptr<record_table> table_;
};
}  // namespace

std::shared_ptr<budget_store> budget_over(std::shared_ptr<own_records> records) {
  return std::make_shared<record_budget>(std::move(records));
}

std::shared_ptr<budget_store> open_budget(const std::shared_ptr<admin_store>& st) {
  auto records = std::dynamic_pointer_cast<own_records>(st);
  return records ? budget_over(std::move(records)) : nullptr;
}

}  // namespace dibs
