#include <dibs/stores/sql_table_names.hpp>

#include <dibs/field_mapping.hpp>
#include <dibs/setting_error.hpp>

#include "table_gap.hpp"

#include <algorithm>
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

void check_mapped_columns(const std::vector<std::string>& mapped, const std::string& key, const std::string& source,
                        const std::string& target) {
  dibs::check_mapped_names(mapped, {key, source, target, {}, "dibs_", true});
}

std::string missing_mapped_refusal(const std::string& table, const std::vector<std::string>& mapped,
                                   const std::vector<std::string>& types, const std::vector<std::string>& columns,
                                   bool (*same)(const std::string&, const std::string&)) {
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    if (i < types.size() && !types[i].empty()) continue;
    if (std::any_of(columns.begin(), columns.end(), [&](const std::string& c) { return same(c, mapped[i]); })) continue;
    return setting_name("map") + " " + mapped[i] + ": table " + table + " has no column '" + mapped[i] +
           "'; give it a type, and dibs init adds it (" + setting_name("map") + " '" + mapped[i] + "=/...:VARCHAR(255)', " +
           ":DOUBLE PRECISION, :BIGINT, :JSON), or add it yourself (ALTER TABLE " + table + " ADD COLUMN " + mapped[i] + " ...)";
  }
  return {};
}

}  // namespace dibs::sql_common
