// A SQL row's columns as the fields a request reads, for both dialects: the claim returns, beside
// the key and the source, a cell for each other column the templates name, read by the column's
// type, so a column keeps its type as a document's field does: a string is a string, a number or
// boolean its JSON token, a JSON column its object or array, a date its ISO 8601 text; NULL is a
// missing field. The common types come as the server's text (no JSON built on the server, none
// parsed here); the others (dates, arrays, MariaDB's LONGTEXT that may hold JSON) come wrapped by
// the server in a one-member JSON object ({"v": value}) that keeps their type.
#pragma once

#include <adapters/sql/table_gap.hpp>
#include <dibs/job.hpp>
#include <dibs/missing_table_error.hpp>
#include <dibs/stores/sql_table_names.hpp>

#include <stdexcept>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

namespace dibs::sql_common {

// The fields `names` of `object_json` (one JSON object; a member absent or null is a missing
// field), in the order of `names`. A text that is not an object leaves every field missing.
std::vector<job_field> fields_of_row(std::string_view object_json, const std::vector<std::string>& names);

// How a column's cell reads, by its type (`data_type`: MySQL's information_schema DATA_TYPE or
// PostgreSQL's typname, lower case):
//   text     the cell is the string (VARCHAR, CHAR, TEXT, ENUM, uuid, ...);
//   number   the cell is a JSON number as the server writes it (INT, DECIMAL, DOUBLE, numeric, ...);
//            one that is no JSON number (PostgreSQL's NaN, Infinity) is a string;
//   boolean  PostgreSQL's t/f;
//   json     the cell is JSON (PostgreSQL json/jsonb, MySQL's JSON);
//   wrapped  the server wraps the value as {"v": value} (dates as ISO 8601, arrays, MariaDB's
//            LONGTEXT, which JSON columns are: the server knows which hold JSON).
enum class cell_kind { text, number, boolean, json, wrapped };
cell_kind cell_kind_of(const std::string& data_type);

// A cell of column `name` read as `kind` (NULL is a missing field).
job_field field_of_cell(const std::string& name, std::optional<std::string> cell, cell_kind kind);

// What the claim reads by type for a store: its columns in order, their kinds, and whether the
// first is the source (then the source field is replaced by its typed reading).
struct typed_read {
  std::vector<std::string> columns;
  std::vector<cell_kind> kinds;
  bool source_first = false;
};
template <class Key>
typed_read typed_read_of(const table_names<Key>& n) {
  typed_read r{n.typed_columns(), {}, n.source_typed};
  for (const auto& type : n.typed_column_types()) r.kinds.push_back(cell_kind_of(type));
  return r;
}
// `j` (its source field first) with the fields of `row`'s cells from `first` on, one per column of
// `read`: the source's typed reading in its place, the other columns after it. `j` as it is when
// `read` names none. The cells are moved out of `row` (a claim's rows are read once).
job with_typed_cells(job j, std::vector<std::optional<std::string>>& row, std::size_t first, const typed_read& read);

// What a column of this type becomes in a request; empty when it may be read, else why not
// (binary columns: their bytes are no text a request can carry). `data_type`: information_schema's
// DATA_TYPE, in either dialect's spelling.
std::string unreadable_column_type(const std::string& data_type);

// A column type that may hold JSON the server embeds as JSON in a JSON object it builds.
bool json_column_type(const std::string& data_type);

// `n.more` checked against the table's columns (name, type: the catalog's), `n.more_types` filled:
// a column the table lacks is refused as a missing source column is (the CLI's "did you mean"),
// a binary one with why. `same`: how the server compares column names.
template <class Key>
void settle_more_columns(table_names<Key>& n, const std::vector<std::pair<std::string, std::string>>& columns,
                         same_name_fn same) {
  n.more_types.clear();
  std::vector<std::string> names;
  for (const auto& c : columns) names.push_back(c.first);
  // The source (dibs init's record may have named it after the request's fields were listed) is
  // read as the source, not twice.
  n.more.erase(std::remove_if(n.more.begin(), n.more.end(), [&](const std::string& m) { return same(m, n.source); }), n.more.end());
  for (const auto& wanted : n.more) {
    // Named inside the claim's statement as a literal: a plain name only.
    if (wanted.empty() || !std::all_of(wanted.begin(), wanted.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; }))
      throw std::invalid_argument("a request reads the field '" + wanted + "': a SQL row's columns are read by plain names (letters, "
                                  "digits, _); a view can rename the column");
    const auto it = std::find_if(columns.begin(), columns.end(), [&](const auto& c) { return same(c.first, wanted); });
    if (it == columns.end()) throw missing_table_error::source_column(wanted, n.table, names);
    if (const auto why = unreadable_column_type(it->second); !why.empty())
      throw std::invalid_argument("column " + wanted + " of table " + n.table + " is " + why);
    n.more_types.push_back(it->second);
  }
  const auto source = std::find_if(columns.begin(), columns.end(), [&](const auto& c) { return same(c.first, n.source); });
  n.source_typed = source != columns.end() && json_column_type(source->second);
  n.source_type = source != columns.end() ? source->second : std::string();
}

}  // namespace dibs::sql_common
