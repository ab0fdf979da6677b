// Which column a SQL store addresses a user's rows by (MySQL/MariaDB and PostgreSQL alike), as a
// pure function of what the catalog says (tests/unit/test_row_key_pick.cpp):
//
//   1. the table's primary key, when it is one column of a type dibs can compare exactly;
//   2. else a column `id` that is NOT NULL and unique by itself (what `dibs init` adds);
//   3. else, when the table has no column `id`: none yet -- `dibs init` adds `id` (numbered);
//   4. else the table is refused: why, and what to run (one line).
//
// Ids are the key's own text end to end (the store reads the key as text and compares it back
// as the column's type), so a uuid, a varchar or a negative bigint keys a row as well as a
// serial number does.
#pragma once

#include <string>
#include <vector>

namespace dibs {

struct key_column_facts {
  std::string name;
  bool not_null = false;
  std::string unusable;  // why dibs can't address rows by this column's type ("" = it can), e.g. "a FLOAT"
};

struct unique_key_facts {
  bool primary = false;
  std::vector<std::string> columns;  // in key order
};

// One column of a unique index, as a catalog lists them: index by index, in key order.
struct index_column {
  std::string index;
  bool primary = false;
  std::string column;
};
std::vector<unique_key_facts> unique_keys_of(const std::vector<index_column>& parts);

struct row_key_pick {
  std::string column;    // the key's column ("" when none)
  bool primary = false;  // it is the primary key
  bool add_id = false;   // none yet, and no column `id`: `dibs init` adds one
  std::string refusal;   // neither: why, and what to do
  bool found() const { return !column.empty(); }
};

// `fold_case`: column names compare without case (MySQL). `make_id_unique`: the statement that
// makes `id` a unique key, for the refusal to name.
row_key_pick pick_row_key(const std::string& table, const std::vector<key_column_facts>& columns,
                          const std::vector<unique_key_facts>& keys, bool fold_case, const std::string& make_id_unique);

}  // namespace dibs
