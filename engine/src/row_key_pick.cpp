#include "row_key_pick.hpp"

#include <algorithm>
#include <cctype>

namespace dibs {

namespace {
bool same(const std::string& a, const std::string& b, bool fold_case) {
  if (!fold_case) return a == b;
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

std::vector<unique_key_facts> unique_keys_of(const std::vector<index_column>& parts) {
  std::vector<unique_key_facts> out;
  const std::string* current = nullptr;
  for (const auto& p : parts) {
    if (!current || p.index != *current) out.push_back(unique_key_facts{p.primary, {}});
    current = &p.index;
    out.back().columns.push_back(p.column);
  }
  return out;
}

row_key_pick pick_row_key(const std::string& table, const std::vector<key_column_facts>& columns,
                          const std::vector<unique_key_facts>& keys, bool fold_case, const std::string& make_id_unique) {
  auto column = [&](const std::string& name) -> const key_column_facts* {
    for (const auto& c : columns)
      if (same(c.name, name, fold_case)) return &c;
    return nullptr;
  };
  const unique_key_facts* primary = nullptr;
  for (const auto& k : keys)
    if (k.primary) primary = &k;

  row_key_pick pick;
  if (primary && primary->columns.size() == 1) {
    const auto* c = column(primary->columns.front());
    if (c && c->unusable.empty()) {
      pick.column = c->name;
      pick.primary = true;
      return pick;
    }
  }
  const auto* id = column("id");
  if (!id) {
    pick.add_id = true;
    return pick;
  }
  const bool id_unique = std::any_of(keys.begin(), keys.end(), [&](const unique_key_facts& k) {
    return k.columns.size() == 1 && same(k.columns.front(), id->name, fold_case);
  });
  if (id_unique && id->not_null && id->unusable.empty()) {
    pick.column = id->name;
    pick.primary = primary && primary->columns.size() == 1 && same(primary->columns.front(), id->name, fold_case);
    return pick;
  }

  std::string why;
  if (!primary) why = "it has no primary key";
  else if (primary->columns.size() > 1)
    why = "its primary key has " + std::to_string(primary->columns.size()) + " columns (" + joined(primary->columns) + ")";
  else {
    const auto* c = column(primary->columns.front());
    why = "its primary key " + primary->columns.front() + " is " + (c ? c->unusable : std::string("not a column dibs can read"));
  }
  if (!id->unusable.empty()) why += ", and its column " + id->name + " is " + id->unusable;
  else if (!id_unique) why += ", and its column " + id->name + " is not unique by itself";
  else why += ", and its column " + id->name + " may be NULL";
  pick.refusal = "table " + table + " has no key dibs can address its rows by: " + why +
                 "; give it a one-column primary key, or make " + id->name + " a unique NOT NULL key: " + make_id_unique;
  return pick;
}

}  // namespace dibs
