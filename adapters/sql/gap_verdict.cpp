#include "gap_verdict.hpp"

#include <dibs/missing_table_error.hpp>
#include <dibs/setting_error.hpp>

#include <stdexcept>

namespace dibs::sql_common {

bool judge_gap(const schema_gap& gap, const table_needs& needs, const table_shape& shape, const gap_context& c) {
  if (gap.complete()) return false;
  // The CLI names the flag that chose this column and the one the user probably meant.
  if (gap.source_missing) throw missing_table_error::source_column(c.source, c.table, shape.columns);
  if (!gap.taken.empty()) throw std::invalid_argument(taken_message(c.table, gap, c.rename_example));
  // Only the target missing (the rest is dibs's already), or dibs init not told it is new.
  const bool only_target = gap.target_missing && gap.columns.size() == 1 && !gap.index_missing && gap.renames.empty() &&
                           !gap.claim_stale;
  if (gap.target_missing && (c.may_change ? !c.target_is_new : only_target))
    throw missing_table_error::target_column(needs.target, c.table, shape.columns,
                                             c.may_change ? "a column that is new: add " + setting_name("new_target")
                                                          : "a column that is new: " + c.init_hint + " " + setting_name("new_target"));
  if (!c.may_change) throw std::invalid_argument(gap_message(c.table, gap, needs, c.statements, c.init_hint));
  return true;
}

std::string unnamed_table_refusal(const std::string& database, const std::vector<std::string>& tables) {
  std::string listed;
  for (std::size_t i = 0; i < tables.size() && i < 12; ++i) listed += (i ? ", " : "") + tables[i];
  if (tables.size() > 12) listed += ", ... (" + std::to_string(tables.size()) + " in all)";
  return setting_name("store") + " names no table: add ?table=NAME to it (without one dibs looks for jobs, and database " +
         database + " has none; its tables: " + (listed.empty() ? "none" : listed) + ")";
}

std::string earlier_target_note(const std::string& table, const settings_record& recorded, const std::string& target,
                                bool recording) {
  const auto* before = recorded_value(recorded, "target");
  if (!recording || !before || *before == target) return "";
  return "table " + table + " now writes the answers to " + target + "; its column " + *before +
         ", the target dibs init recorded before, is left as it is (drop it yourself if it holds nothing you need)";
}

}  // namespace dibs::sql_common
