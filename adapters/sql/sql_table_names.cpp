#include <dibs/stores/sql_table_names.hpp>

#include <dibs/setting_error.hpp>

#include "table_gap.hpp"

#include <cctype>
#include <stdexcept>

namespace dibs::sql_common {

std::string create_table_statement(const std::string& quoted_table, const std::vector<std::string>& lines,
                                   const std::string& suffix) {
  std::string out = "CREATE TABLE IF NOT EXISTS " + quoted_table + " (\n";
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? ",\n  " : "  ") + lines[i];
  return out + "\n)" + suffix;
}

void check_plain_names(const std::string& table, const std::string& source, const std::string& target,
                       std::size_t max_chars, std::initializer_list<const char*> reserved) {
  for (const auto* name : {&table, &source, &target}) {
    if (name->empty() || name->size() > max_chars) throw std::invalid_argument("bad SQL name '" + *name + "'");
    for (unsigned char c : *name)
      if (!(std::isalnum(c) || c == '_'))
        throw std::invalid_argument("bad SQL name '" + *name + "': use letters, digits and _ only");
  }
  if (source == target) throw std::invalid_argument(setting_name("source") + " and " + setting_name("target") + " must be different columns");
  for (const auto* name : {&source, &target})
    for (const char* own : reserved)
      if (*name == own) throw std::invalid_argument("'" + *name + "' is a column dibs keeps its lease in: choose another name");
}

void check_mapped_names(const std::vector<std::string>& mapped, const std::string& key, const std::string& source,
                        const std::string& target) {
  auto same = [](const std::string& a, const std::string& b) { return caseless_name(a, b); };
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    const auto& m = mapped[i];
    const std::string where = setting_name("map") + " " + m + ": ";
    if (!key.empty() && same(m, key))
      throw std::invalid_argument(where + "'" + m + "' is the table's key, which rows are addressed by: map to another column");
    if (same(m, source)) throw std::invalid_argument(where + "'" + m + "' is the " + setting_name("source") + " column: map to another");
    if (same(m, target))
      throw std::invalid_argument(where + "'" + m + "' is the " + setting_name("target") + " column, which holds the whole answer: map to another");
    if (m.size() >= 5 && same(m.substr(0, 5), "dibs_"))
      throw std::invalid_argument(where + "'" + m + "' is a name dibs keeps its own columns under: map to another");
    for (std::size_t j = 0; j < i; ++j)
      if (same(m, mapped[j])) throw std::invalid_argument(where + "the column '" + m + "' is mapped twice");
  }
}

}  // namespace dibs::sql_common
