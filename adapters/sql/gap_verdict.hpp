// What a command may do about a user's table that is not yet what dibs needs (table_gap.hpp), for
// either SQL dialect: refuse it with the one line that says why, or (dibs init) change it. Pure
// (tests/unit/test_table_gap.cpp).
//
//   a column of the table's own under one of dibs's names   refused, every command, dibs init too
//   target is not a column                                 refused with the columns there (the
//                                                            CLI's "did you mean"), unless dibs init
//                                                            was told it is new (new_target): a
//                                                            typo would make every row pending
//   anything else missing, renamed or moved                  dibs init changes it; any other
//                                                            command refuses with the statements
#pragma once

#include <adapters/sql/table_gap.hpp>

#include <dibs/recorded_settings.hpp>

#include <string>
#include <vector>

namespace dibs::sql_common {

struct gap_context {
  std::string table;
  std::string source;           // the column dibs reads (the user's data: never added)
  bool may_change = false;      // dibs init
  bool target_is_new = false;   // dibs init new_target (or a table dibs init just created)
  std::string statements;       // what changes it, each ending in ';'
  std::string rename_example;   // how to rename the first taken column
  std::string init_hint;        // the dibs init command (redacted URI)
};

// Throws the refusal `gap` calls for (std::invalid_argument, or missing_table_error for target);
// returns true when dibs init has statements to run, false when the table is ready as it is.
bool judge_gap(const schema_gap& gap, const table_needs& needs, const table_shape& shape, const gap_context& c);

// The refusal of a URI that names no table (no ?table=) when the default one, jobs, is not in
// `database` either: the user never named jobs, so the message names what they left out, and the
// tables there.
std::string unnamed_table_refusal(const std::string& database, const std::vector<std::string>& tables);

// dibs init given another target than the one it recorded: the earlier target's column stays as
// it is (it may hold answers), said once. "" otherwise.
std::string earlier_target_note(const std::string& table, const settings_record& recorded, const std::string& target,
                                bool recording);

}  // namespace dibs::sql_common
