// The key a MySQL/MariaDB table's rows are addressed by, as dibs uses it (pure; tests/unit/
// test_sql_row_key.cpp): an item's id is the key's own text -- read by the claim as the server
// prints it (a binary key as HEX) -- and goes back into a statement as a literal the column
// compares exactly: integers and decimals as numbers (a quoted number would be compared as a
// double: 10^18 + 1 would match 10^18), binary keys as X'..', everything else quoted, in the
// column's own collation.
#pragma once

#include "engine/src/row_key_pick.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dibs::mysql {

enum class key_kind { signed_integer, unsigned_integer, decimal, text, binary };

struct row_key {
  std::string column = "id";
  key_kind kind = key_kind::unsigned_integer;
  bool primary = true;  // the table's primary key: InnoDB's own order, free to sort by
};

// What information_schema.COLUMNS says of a column (DATA_TYPE, COLUMN_TYPE) -> its kind as a key;
// nullopt for a type dibs can't compare exactly (FLOAT, DOUBLE, BIT, JSON, geometry).
std::optional<key_kind> kind_of(const std::string& data_type, const std::string& column_type);
// Why a column of that type can't key rows, for a refusal ("" when it can).
std::string unusable_key(const std::string& data_type, const std::string& column_type);

// The expression that reads `expr` (a key column, or an aggregate of it) as an id.
std::string key_text(const row_key& k, const std::string& expr);

using quote_fn = std::function<std::string(const std::string&)>;  // value -> 'escaped'

// The literal for the row `id` names; nullopt when `id` can't be a key of this kind as the server
// prints it (an integer key's id must be its canonical decimal: "007" or "+7" names no row).
std::optional<std::string> key_literal(const row_key& k, const std::string& id, const quote_fn& quote);

// From the rows of columns_query (name, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE) and of
// unique_keys_query (index, column, in key order): the facts pick_row_key weighs.
using catalog_row = std::vector<std::optional<std::string>>;
std::vector<key_column_facts> key_columns(const std::vector<catalog_row>& columns);
std::vector<unique_key_facts> unique_keys(const std::vector<catalog_row>& index_parts);

// The key pick_row_key chose, with its kind from the columns' rows.
row_key key_of(const row_key_pick& pick, const std::vector<catalog_row>& columns);

}  // namespace dibs::mysql
