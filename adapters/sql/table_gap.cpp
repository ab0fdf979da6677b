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

schema_gap find_gap(const std::string& source, const std::vector<std::string>& needed, const std::string& index,
                    const table_shape& shape, same_name_fn same) {
  schema_gap gap;
  gap.source_missing = !has_name(shape.columns, source, same);
  for (const auto& name : needed)
    if (!has_name(shape.columns, name, same)) gap.columns.push_back(name);
  gap.index_missing = !has_name(shape.indexes, index, same);
  return gap;
}

std::string gap_message(const std::string& table, const schema_gap& gap, const std::string& index,
                        const std::string& statements, const std::string& init_hint) {
  std::string missing;
  for (const auto& c : gap.columns) missing += (missing.empty() ? "" : ", ") + c;
  if (gap.index_missing) missing += (missing.empty() ? "" : ", ") + std::string("index ") + index;
  return "table " + table + " lacks what dibs keeps its claims in (" + missing + "); add it with: " + statements +
         " or run: " + init_hint;
}

}  // namespace dibs::sql_common
