#include "mysql_row_key.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

namespace dibs::mysql {

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool one_of(const std::string& v, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return v == n; });
}

template <class Int>
bool canonical_integer(const std::string& id) {
  Int v{};
  const auto* end = id.data() + id.size();
  const auto [p, ec] = std::from_chars(id.data(), end, v);
  return ec == std::errc() && p == end && std::to_string(v) == id;  // "007", "+7", "-0": not as the server prints it
}

bool decimal_text(const std::string& id) {
  std::size_t i = id.size() > 1 && id[0] == '-' ? 1 : 0;
  const auto digits = [&] {
    const auto from = i;
    while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i]))) ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < id.size() && id[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  return i == id.size();
}

bool hex_text(const std::string& id) {
  return !id.empty() && id.size() % 2 == 0 &&
         std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'A' && c <= 'F'); });
}
}  // namespace

std::optional<key_kind> kind_of(const std::string& data_type, const std::string& column_type) {
  const auto t = lower(data_type);
  if (one_of(t, {"tinyint", "smallint", "mediumint", "int", "integer", "bigint"}))
    return lower(column_type).find("unsigned") != std::string::npos ? key_kind::unsigned_integer : key_kind::signed_integer;
  if (one_of(t, {"decimal", "numeric"})) return key_kind::decimal;
  if (one_of(t, {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})) return key_kind::binary;
  if (one_of(t, {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "date", "datetime",
                 "timestamp", "time", "year", "uuid", "inet4", "inet6"}))
    return key_kind::text;
  return std::nullopt;
}

std::string unusable_key(const std::string& data_type, const std::string& column_type) {
  if (kind_of(data_type, column_type)) return "";
  return "a " + (column_type.empty() ? data_type : column_type) + ", which dibs can't compare exactly";
}

std::string key_text(const row_key& k, const std::string& expr) {
  return k.kind == key_kind::binary ? "HEX(" + expr + ")" : expr;
}

std::optional<std::string> key_literal(const row_key& k, const std::string& id, const quote_fn& quote) {
  switch (k.kind) {
    case key_kind::signed_integer:
      if (!canonical_integer<std::int64_t>(id)) return std::nullopt;
      return id;
    case key_kind::unsigned_integer:
      if (!canonical_integer<std::uint64_t>(id)) return std::nullopt;
      return id;
    case key_kind::decimal:
      if (!decimal_text(id)) return std::nullopt;
      return id;  // an exact decimal literal, compared as one
    case key_kind::binary:
      if (!hex_text(id)) return std::nullopt;
      return "X'" + id + "'";
    case key_kind::text:
      return quote(id);
  }
  return std::nullopt;
}

std::vector<key_column_facts> key_columns(const std::vector<catalog_row>& columns) {
  std::vector<key_column_facts> out;
  for (const auto& r : columns) {
    if (r.size() < 4) continue;
    key_column_facts f;
    f.name = r[0].value_or("");
    f.not_null = r[3].value_or("YES") == "NO";
    f.unusable = unusable_key(r[1].value_or(""), r[2].value_or(""));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<unique_key_facts> unique_keys(const std::vector<catalog_row>& index_parts) {
  std::vector<index_column> parts;
  for (const auto& r : index_parts)
    if (r.size() >= 2) parts.push_back(index_column{r[0].value_or(""), r[0] == "PRIMARY", r[1].value_or("")});
  return unique_keys_of(parts);
}

row_key key_of(const row_key_pick& pick, const std::vector<catalog_row>& columns) {
  row_key k;
  k.column = pick.column;
  k.primary = pick.primary;
  for (const auto& r : columns)
    if (r.size() >= 4 && lower(r[0].value_or("")) == lower(pick.column))
      if (const auto kind = kind_of(r[1].value_or(""), r[2].value_or(""))) k.kind = *kind;
  return k;
}

}  // namespace dibs::mysql
