// The key a PostgreSQL table's rows are addressed by, as dibs uses it (pure; tests/unit/
// test_pg_row_key.cpp): an item's id is the key's own text (`key::text`, as the server prints
// it), and goes back as a text parameter cast to the key's type (`$1::uuid`), so the column
// compares it -- and uses its index -- exactly as its own values. Any type with a text form keys
// rows: uuid, text, varchar, char (as bpchar: a cast to plain `character` would cut it to one
// character), numeric, dates, 19-digit and negative integers.
#pragma once

#include "engine/src/row_key_pick.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::pg {

struct row_key {
  std::string column = "id";
  std::string type = "bigint";  // what a parameter is cast to (from the catalog, as the server spells it)
  int integer_bits = 64;        // smallint 16, integer 32, bigint 64; 0 for any other type
};

// Whether `id` can name a row of this key: an integer key's id is its canonical decimal within
// the type's range ("007", "+7" and 2^63 name none); any other type's text is for its cast to judge.
bool key_accepts(const row_key& k, std::string_view id);

// columns_query's rows: name, type (format_type without modifier), typname, type with its
// modifier, attnotnull ("t"/"f"); unique_keys_query's: index, primary ("t"/"f"), column.
using catalog_row = std::vector<std::optional<std::string>>;
std::vector<key_column_facts> key_columns(const std::vector<catalog_row>& columns);
std::vector<unique_key_facts> unique_keys(const std::vector<catalog_row>& index_parts);
row_key key_of(const row_key_pick& pick, const std::vector<catalog_row>& columns);

}  // namespace dibs::pg
