#include "table_gap.hpp"

#include <algorithm>
#include <cctype>

namespace dibs::sql_common {

bool exact_name(const std::string& a, const std::string& b) { return a == b; }

bool caseless_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

bool has_name(const std::vector<std::string>& names, const std::string& name, same_name_fn same) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& x) { return same(x, name); });
}

schema_gap find_gap(const std::string& source, const table_needs& needs, const table_shape& shape) {
  schema_gap gap;
  gap.source_missing = !has_name(shape.columns, source, needs.same);
  for (const auto& column : needs.columns)
    if (!has_name(shape.columns, column.first, needs.same)) gap.columns.push_back(column.first);
  gap.index_missing = !has_name(shape.indexes, needs.index, needs.same);
  return gap;
}

std::string add_column_clauses(const table_needs& needs, const schema_gap& gap) {
  std::string clauses;
  for (const auto& [name, definition] : needs.columns)
    if (has_name(gap.columns, name, exact_name)) clauses += (clauses.empty() ? "" : ", ") + std::string("ADD COLUMN ") + definition;
  return clauses;
}

std::string gap_message(const std::string& table, const schema_gap& gap, const table_needs& needs,
                        const std::string& statements, const std::string& init_hint) {
  std::string missing;
  for (const auto& c : gap.columns) missing += (missing.empty() ? "" : ", ") + c;
  if (gap.index_missing) missing += (missing.empty() ? "" : ", ") + std::string("index ") + needs.index;
  return "table " + table + " lacks what dibs keeps its claims in (" + missing + "); add it with: " + statements +
         " or run: " + init_hint;
}

}  // namespace dibs::sql_common
