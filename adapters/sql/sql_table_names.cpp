#include <dibs/stores/sql_table_names.hpp>

#include <dibs/setting_error.hpp>

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

}  // namespace dibs::sql_common
