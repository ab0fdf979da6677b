#include "pg_row_key.hpp"

#include <charconv>
#include <cstdint>

namespace dibs::pg {

bool key_accepts(const row_key& k, std::string_view id) {
  if (k.integer_bits == 0) return true;
  std::int64_t v = 0;
  const auto* end = id.data() + id.size();
  const auto [p, ec] = std::from_chars(id.data(), end, v);
  if (ec != std::errc() || p != end || std::to_string(v) != id) return false;
  if (k.integer_bits >= 64) return true;
  const auto limit = std::int64_t{1} << (k.integer_bits - 1);
  return v >= -limit && v < limit;
}

std::vector<key_column_facts> key_columns(const std::vector<catalog_row>& columns) {
  std::vector<key_column_facts> out;
  for (const auto& r : columns) {
    if (r.size() < 5) continue;
    // Every type PostgreSQL can key a unique index by has an exact text form and equality.
    out.push_back(key_column_facts{r[0].value_or(""), r[4].value_or("f") == "t", ""});
  }
  return out;
}

std::vector<unique_key_facts> unique_keys(const std::vector<catalog_row>& index_parts) {
  std::vector<index_column> parts;
  for (const auto& r : index_parts)
    if (r.size() >= 3) parts.push_back(index_column{r[0].value_or(""), r[1] == "t", r[2].value_or("")});
  return unique_keys_of(parts);
}

row_key key_of(const row_key_pick& pick, const std::vector<catalog_row>& columns) {
  row_key k;
  k.column = pick.column;
  for (const auto& r : columns) {
    if (r.size() < 5 || r[0].value_or("") != pick.column) continue;
    const auto typname = r[2].value_or("");
    // bpchar without its length is unbounded (`character` alone would be char(1)); bit's length
    // is part of its values; every other type compares the same without its modifier (varchar(12)
    // would cut a longer text to 12 characters and match another row).
    if (typname == "bpchar") k.type = "bpchar";
    else if (typname == "bit") k.type = r[3].value_or("bit");
    else k.type = r[1].value_or("text");
    k.integer_bits = typname == "int2" ? 16 : typname == "int4" ? 32 : typname == "int8" ? 64 : 0;
  }
  return k;
}

}  // namespace dibs::pg
