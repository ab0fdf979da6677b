#include "table_gap.hpp"

#include "own_columns.hpp"

#include <algorithm>
#include <cctype>

namespace dibs::sql_common {

bool exact_name(const std::string& a, const std::string& b) { return a == b; }

bool caseless_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

bool has_name(const std::vector<std::string>& names, const std::string& name, same_name_fn same) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& x) { return same(x, name); });
}

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The kind of column `name` (table_shape::kinds), "" when unknown.
std::string kind_of(const table_shape& shape, const std::string& name, same_name_fn same) {
  for (std::size_t i = 0; i < shape.columns.size() && i < shape.kinds.size(); ++i)
    if (same(shape.columns[i], name)) return shape.kinds[i];
  return "";
}

// The same names, whatever their order (and, for MySQL, their case).
bool same_set(const std::vector<std::string>& a, const std::vector<std::string>& b, same_name_fn same) {
  return std::all_of(a.begin(), a.end(), [&](const std::string& x) { return has_name(b, x, same); }) &&
         std::all_of(b.begin(), b.end(), [&](const std::string& x) { return has_name(a, x, same); });
}

// An earlier dibs prepared this table: its claim object reads a column by an earlier name that the
// table still has, and none of the earlier columns has its name of now yet.
bool earlier_layout(const table_needs& needs, const table_shape& shape) {
  bool reads_earlier = false;
  for (const auto& e : needs.earlier) {
    if (has_name(shape.columns, e.now, needs.same)) return false;
    if (has_name(shape.claim_reads, e.name, needs.same) && has_name(shape.columns, e.name, needs.same)) reads_earlier = true;
  }
  return reads_earlier;
}
}  // namespace

void complete_needs(table_needs& needs, std::vector<column_definition> columns, const std::string& target,
                    const std::vector<std::pair<const char*, const char*>>& earlier_kinds, std::string claim_object) {
  for (auto& column : columns) {
    if (column.first != target) needs.own.push_back(column.first);
    needs.columns.push_back(std::move(column));
  }
  needs.target = target;
  for (const auto& r : renamed_columns)
    for (const auto& [name, kind] : earlier_kinds)
      if (std::string(name) == r.earlier) needs.earlier.push_back({r.earlier, r.now, kind});
  needs.claim_reads = {target, failed_at_column};
  needs.claim_object = std::move(claim_object);
}

schema_gap find_gap(const std::string& source, const table_needs& needs, const table_shape& shape, bool recorded_layout) {
  schema_gap gap;
  const auto same = needs.same;
  const auto has = [&](const std::string& name) { return has_name(shape.columns, name, same); };
  gap.source_missing = !has(source);

  std::vector<std::string> renamed_to;
  if (earlier_layout(needs, shape)) {
    for (const auto& e : needs.earlier) {
      if (!has(e.name)) continue;
      if (kind_of(shape, e.name, same) == e.kind) {
        gap.renames.emplace_back(e.name, e.now);
        renamed_to.push_back(e.now);
      } else {
        gap.left_to_user.push_back(e.name);  // the user's own column, which that dibs used as its own
      }
    }
  }
  const auto present = [&](const std::string& name) { return has(name) || has_name(renamed_to, name, same); };

  // dibs's names in the table that dibs did not put there: some but not all of them, with no
  // record of dibs init's (a table dibs prepared has them all; one prepared before a newer dibs
  // added a column is recorded).
  std::vector<std::string> own_there;
  for (const auto& name : needs.own)
    if (has(name)) own_there.push_back(name);
  const bool earlier_names_now = !gap.renames.empty() || !gap.left_to_user.empty();
  if (earlier_names_now) {
    for (const auto& e : needs.earlier)  // the new names must be free for the renames
      if (has(e.now)) gap.taken.push_back(e.now);
  } else if (!own_there.empty() && own_there.size() < needs.own.size() && !recorded_layout) {
    gap.taken = own_there;
  }

  for (const auto& column : needs.columns)
    if (!present(column.first)) gap.columns.push_back(column.first);
  gap.target_missing = !present(needs.target);
  gap.index_missing = !has_name(shape.indexes, needs.index, same);

  gap.claim_present = !shape.claim_reads.empty();
  if (gap.claim_present) {
    for (const auto& read : shape.claim_reads) {
      std::string now = read;
      for (const auto& [from, to] : gap.renames)
        if (same(from, read)) now = to;
      gap.claim_reads_now.push_back(now);
    }
    gap.claim_stale = !same_set(gap.claim_reads_now, needs.claim_reads, same);
  }
  return gap;
}

std::string add_column_clauses(const table_needs& needs, const schema_gap& gap) {
  std::string clauses;
  for (const auto& [name, definition] : needs.columns)
    if (has_name(gap.columns, name, exact_name)) clauses += (clauses.empty() ? "" : ", ") + std::string("ADD COLUMN ") + definition;
  return clauses;
}

namespace {
std::string renames_text(const schema_gap& gap) {
  std::string from, to;
  for (const auto& [a, b] : gap.renames) {
    from += (from.empty() ? "" : ", ") + a;
    to += (to.empty() ? "" : ", ") + b;
  }
  return "(" + from + ") to be renamed " + to;
}

// What the claim object reads that it must not: the earlier target.
std::string stale_reads(const schema_gap& gap, const table_needs& needs) {
  std::vector<std::string> other;
  for (const auto& r : gap.claim_reads_now)
    if (!has_name(needs.claim_reads, r, needs.same)) other.push_back(r);
  return other.empty() ? "other columns" : joined(other);
}
}  // namespace

std::string gap_message(const std::string& table, const schema_gap& gap, const table_needs& needs,
                        const std::string& statements, const std::string& init_hint) {
  std::string missing = joined(gap.columns);
  if (gap.index_missing) missing += (missing.empty() ? "" : ", ") + std::string("index ") + needs.index;
  if (gap.renames.empty() && !gap.claim_stale)
    return "table " + table + " lacks what dibs keeps its claims in (" + missing + "); add it with: " + statements +
           " or run: " + init_hint;
  std::vector<std::string> parts;
  if (!gap.renames.empty())
    parts.push_back("keeps dibs's columns under the names an earlier dibs gave them " + renames_text(gap) +
                    " (their values kept)");
  if (!missing.empty()) parts.push_back("lacks what dibs keeps its claims in (" + missing + ")");
  if (gap.claim_stale)
    parts.push_back("has " + needs.claim_object + " reading " + stale_reads(gap, needs) + ", not the target " + needs.target);
  std::string said;
  for (const auto& p : parts) said += (said.empty() ? "" : "; it ") + p;
  return "table " + table + " " + said + "; change it with: " + statements + " or run: " + init_hint;
}

std::string taken_message(const std::string& table, const schema_gap& gap, const std::string& rename_example) {
  if (gap.taken.empty()) return "";
  return "table " + table + " has column" + (gap.taken.size() > 1 ? "s" : "") + " of its own named as dibs names its own (" +
         joined(gap.taken) + "): dibs would write into " + (gap.taken.size() > 1 ? "them" : "it") +
         ", so it leaves this table alone; rename yours (" + rename_example + "), then run dibs init again";
}

std::string moves_note(const std::string& table, const schema_gap& gap, const table_needs& needs) {
  std::vector<std::string> parts;
  if (!gap.renames.empty()) {
    std::string pairs;
    for (const auto& [a, b] : gap.renames) pairs += (pairs.empty() ? "" : ", ") + a + " -> " + b;
    parts.push_back("renamed the columns an earlier dibs made (" + pairs + "), their values kept");
  }
  if (!gap.left_to_user.empty())
    parts.push_back("left " + joined(gap.left_to_user) + " as " + (gap.left_to_user.size() > 1 ? "they are" : "it is") +
                    ": the table's own (not of the type dibs gave it), which dibs no longer writes");
  if (gap.claim_stale)
    parts.push_back("moved " + needs.claim_object + " from " + stale_reads(gap, needs) + " to the target " + needs.target);
  std::string said;
  for (const auto& p : parts) said += (said.empty() ? "" : "; ") + p;
  return said.empty() ? "" : "table " + table + ": " + said;
}

}  // namespace dibs::sql_common
