// The table (or MongoDB collection) that store names is not there, and this command may not
// create it (dibs enrich and dibs status create nothing; dibs seed and dibs init do). The store
// knows what exists beside it; the program that knows the user's words (the CLI) picks the name
// they probably meant with its own "did you mean" and shows message(suggestion).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

class missing_table_error : public std::runtime_error {
 public:
  // kind: "table" or "collection"; where: "database dibs" (what holds it); advice: how to make
  // it (never with a password: the store passes its redacted URI).
  missing_table_error(std::string kind, std::string name, std::string where, std::vector<std::string> existing,
                      std::string advice)
      : std::runtime_error(compose(kind, name, where, std::nullopt, advice)),
        kind(std::move(kind)),
        name(std::move(name)),
        where(std::move(where)),
        existing(std::move(existing)),
        advice(std::move(advice)) {}

  std::string message(const std::optional<std::string>& suggestion) const {
    return compose(kind, name, where, suggestion, advice);
  }

  // The column the store reads (source, or url's {field}) is not in `table`: the user's data,
  // which dibs never adds; `columns` are those there (the CLI's "did you mean" picks among them).
  static missing_table_error source_column(const std::string& column, const std::string& table,
                                           const std::vector<std::string>& columns) {
    std::string listed;
    for (const auto& c : columns) listed += (listed.empty() ? "" : ", ") + c;
    return missing_table_error("column", column, "table " + table, columns, "its columns: " + listed);
  }

  // The column the answers go to (target) is not in `table`: a new one only when the user says
  // so, as a misspelled one would take every row for pending (the SQL counterpart of MongoDB's
  // "field" refusal); `advice` says how to say it is new.
  static missing_table_error target_column(const std::string& column, const std::string& table,
                                           const std::vector<std::string>& columns, const std::string& advice) {
    return missing_table_error("target column", column, "table " + table, columns, advice);
  }

  std::string kind, name, where;
  std::vector<std::string> existing;  // the names beside it, for "did you mean"
  std::string advice;

 private:
  static std::string compose(const std::string& kind, const std::string& name, const std::string& where,
                             const std::optional<std::string>& suggestion, const std::string& advice) {
    std::string s = "no " + kind + " '" + name + "' in " + where;
    // With a name meant, the advice (how to create it) is for a name that is really new: said
    // so, not offered as the fix for a typo.
    if (suggestion) return s + "; did you mean '" + *suggestion + "'? (if '" + name + "' is a new " + kind + ": " + advice + ")";
    return s + " (" + advice + ")";
  }
};

}  // namespace dibs
