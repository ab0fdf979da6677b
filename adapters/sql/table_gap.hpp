// What a user's own table lacks of the columns and the index dibs keeps its claims in, for either
// SQL dialect, and the one-line refusals that name it. Pure (tests/unit/test_sql_table_schema.cpp,
// test_pg_table_schema.cpp, test_table_gap.cpp); each dialect's table_schema lists its columns and
// writes the statements that add them.
//
// Besides what is missing, the gap says what `dibs init` must move: the columns an earlier dibs
// kept under plain names (own_columns.hpp: renamed, unless the table's column of that name is the
// user's own), and the claim object (MySQL: the generated column dibs_open; PostgreSQL: the claim
// index's predicate) when it reads another target than the one in effect. And what it must never
// write: a column of the table's own that bears one of dibs's names.
#pragma once

#include <dibs/stores/sql_table_names.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dibs::sql_common {

// What the server's catalog says the table has (names as the server spells them).
struct table_shape {
  std::vector<std::string> columns;
  std::vector<std::string> indexes;
  // Each column's type as the dialect sums it up (the same order as columns; may be empty):
  // compared with earlier_column::kind to tell a column an earlier dibs made from the user's own.
  std::vector<std::string> kinds;
  // The column names the claim object reads (MySQL: dibs_open's expression; PostgreSQL: the
  // claim index's predicate); empty when the table has none.
  std::vector<std::string> claim_reads;
};

// A column an earlier dibs made under a plain name: that name, its name now, and its type as that
// dibs made it (as the dialect sums a type up for table_shape::kinds).
struct earlier_column {
  std::string name;
  std::string now;
  std::string kind;
};

// Whether two column or index names are the same to the server.
using same_name_fn = bool (*)(const std::string&, const std::string&);
bool exact_name(const std::string& a, const std::string& b);
bool caseless_name(const std::string& a, const std::string& b);  // MySQL's column and index names
bool has_name(const std::vector<std::string>& names, const std::string& name, same_name_fn same);

// What one dialect keeps its claims in (mysql_table_schema.cpp, pg_table_schema.cpp): every column
// with its definition, in the order they are added (the key first: only a table with no key of its
// own gets dibs's `id`; then the target; then dibs's own), the claim index's name, and how the
// server compares names. More columns (the user's, filled from the answer) go at the end of
// `columns`: added when missing like the target, never refused for being there.
struct table_needs {
  std::vector<column_definition> columns;
  std::string index;
  same_name_fn same = exact_name;
  std::string target;
  std::vector<std::string> own;           // dibs's own columns: a table's column of such a name is refused
  std::vector<earlier_column> earlier;    // what an earlier dibs named them
  std::vector<std::string> claim_reads;   // what the claim object must read: the target, dibs_failed_at
  std::string claim_object;               // as messages name it: "the claim column dibs_open"
};

// `needs` (its key column, index and name comparison set) completed with a dialect's columns
// (dibs_columns: the target first, then dibs's own), the earlier dibs's kind of each renamed one
// (own_columns.hpp's earlier names, as the dialect sums a type up), and its claim object's name.
void complete_needs(table_needs& needs, std::vector<column_definition> columns, const std::string& target,
                    const std::vector<std::pair<const char*, const char*>>& earlier_kinds, std::string claim_object);

struct schema_gap {
  bool source_missing = false;       // source: the user's data, dibs can't add it
  bool target_missing = false;       // target is not a column yet (it is in `columns`)
  std::vector<std::string> columns;  // columns to add, in order
  bool index_missing = false;        // the claim index
  // An earlier dibs's columns to rename (earlier name, name now), and the earlier names the table
  // has as its own (their type is not the one dibs gave them): left alone, dibs's added beside.
  std::vector<std::pair<std::string, std::string>> renames;
  std::vector<std::string> left_to_user;
  std::vector<std::string> taken;    // dibs's names the table has as its own: refused, never written
  bool claim_present = false;        // the table has a claim object
  bool claim_stale = false;          // ... and it reads other columns than it must (another target)
  std::vector<std::string> claim_reads_now;  // what it reads now (after the renames)
  bool complete() const {
    return !source_missing && columns.empty() && !index_missing && renames.empty() && taken.empty() && !claim_stale;
  }
};

// What the table of `shape` lacks of `needs`; `source`: the user's column dibs reads;
// `recorded_layout`: dibs init recorded that it prepared this table with dibs's names
// (own_columns.hpp), so a missing one is dibs's to add, not a sign that the others are the user's.
schema_gap find_gap(const std::string& source, const table_needs& needs, const table_shape& shape,
                    bool recorded_layout = false);

// "ADD COLUMN <definition>" for each column `gap` lacks, in `needs`' order, joined by ", "; ""
// when it lacks none.
std::string add_column_clauses(const table_needs& needs, const schema_gap& gap);

// The refusal of a table that lacks dibs's columns or keeps them under an earlier dibs's names (a
// missing source column is missing_table_error::source_column's), one line: the table, what is
// missing, renamed or moved, `statements` (each ending in ';') that do it, and `init_hint` (the
// dibs init command, with the store's redacted URI).
std::string gap_message(const std::string& table, const schema_gap& gap, const table_needs& needs,
                        const std::string& statements, const std::string& init_hint);

// The refusal of a table that has columns of its own under dibs's names (gap.taken), at every
// command: dibs would write into them. "" when there are none.
std::string taken_message(const std::string& table, const schema_gap& gap, const std::string& rename_example);

// What dibs init says it did beyond adding columns: the renames, the earlier names left to the
// user, the claim object moved to the target. "" when nothing of that.
std::string moves_note(const std::string& table, const schema_gap& gap, const table_needs& needs);

}  // namespace dibs::sql_common
