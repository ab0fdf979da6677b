// The settings `dibs init` records with a table or collection (its source, target, and whatever
// else a later command needs), so that `dibs enrich`, `status`, `retry` and `release` need only
// store: each store keeps them in a small table (MongoDB: collection) of dibs's own,
// `dibs_settings`, one record per table, and applies them when it opens (store_options::settings).
//
// The rule, as pure functions: a setting the user did not give takes the recorded value; one the
// user gave is kept when it agrees with the record and refused (setting_conflict, both values
// named) when it does not. `dibs init` given other values records them instead.
#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

// (name, value) pairs as a store keeps them: "source", "target", "lock_field", "on_done", "id_field".
using settings_record = std::vector<std::pair<std::string, std::string>>;

inline const std::string* recorded_value(const settings_record& r, const std::string& name) {
  for (const auto& [n, v] : r)
    if (n == name) return &v;
  return nullptr;
}

// What a store opened for a command does with the record.
struct settings_use {
  bool read = false;               // apply the record (the CLI; a program's own options are left alone)
  std::vector<std::string> given;  // the settings the user gave this time (a flag), by name
  bool record = false;             // dibs init: record the settings in effect (a value given replaces the record's)
  // Filled by the store when it opens: the settings in effect, and whether a record was found.
  struct outcome {
    settings_record in_effect;
    bool found = false;
  };
  std::shared_ptr<outcome> result = std::make_shared<outcome>();

  bool was_given(const std::string& name) const { return std::find(given.begin(), given.end(), name) != given.end(); }
};

// A setting the user gave that contradicts the record: refused, both values named. The CLI says
// it with its flags (as it does a missing table); what() says it with the settings' names.
class setting_conflict : public std::invalid_argument {
 public:
  setting_conflict(std::string name, std::string given, std::string recorded, std::string where)
      : std::invalid_argument(name + " '" + given + "' contradicts the " + name + " '" + recorded + "' that dibs init recorded for " +
                              where),
        name(std::move(name)),
        given(std::move(given)),
        recorded(std::move(recorded)),
        where(std::move(where)) {}
  std::string name, given, recorded, where;
};

// The value of setting `name` to use: `value` (the flag's, or the default) against `recorded`.
inline std::string resolve_setting(const std::string& name, const std::string& value, const settings_use& use,
                                   const settings_record& recorded, const std::string& where) {
  const auto* kept = recorded_value(recorded, name);
  if (!use.read || !kept) return value;
  if (!use.was_given(name)) return *kept;
  if (*kept != value && !use.record) throw setting_conflict(name, value, *kept, where);
  return value;  // dibs init given another value: it is recorded instead
}

}  // namespace dibs
