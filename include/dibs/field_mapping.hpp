// map's text as settings and records keep it: "name=/pointer,name=/pointer:TYPE,...". Each part
// names the item's field (a SQL table's column) that takes one member of the answer (an RFC 6901
// JSON Pointer); a SQL column's type may follow (":VARCHAR(64)", ":DOUBLE PRECISION",
// ":NUMERIC(10,2)", ":JSONB"), which `dibs init` uses to add a column the table lacks. The types
// shape a table once: the record dibs init keeps has the names and pointers only.
//
// Pure: split here (the pointers are checked where they are parsed, answer_map.hpp), the names
// checked against the ones a store writes otherwise (check_mapped_names).
#pragma once

#include <dibs/recorded_settings.hpp>

#include <string>
#include <vector>

namespace dibs {

struct mapping_part {
  std::string name;
  std::string pointer;      // as written; answer_map.hpp parses it
  std::string column_type;  // "" when none was given
};

// The parts of `text`, split at the commas outside a type's parentheses (NUMERIC(10,2) is one
// type). With `with_types`, a part's ":TYPE" is the text after its pointer's last ':' when that
// reads as a SQL column type (is_column_type): a pointer ending in ':' and a type's name can't be
// written there (a record, which holds no types, is read without). Throws std::invalid_argument
// naming `setting` for a part with no '='. Empty parts are skipped.
std::vector<mapping_part> split_mapping(const std::string& text, const std::string& setting, bool with_types = true);

// A SQL column type as dibs init may write it into ALTER TABLE: a known type's whole name (VARCHAR,
// TEXT, INTEGER, BIGINT UNSIGNED, DOUBLE, DOUBLE PRECISION, NUMERIC, DECIMAL, BOOLEAN, JSON, JSONB,
// DATE, TIMESTAMP WITH TIME ZONE, ...), any case, with an optional size "(n)" or "(p,s)": nothing
// else (no NOT NULL, PRIMARY KEY, REFERENCES, DEFAULT), so the text is safe to write into a statement.
bool is_column_type(const std::string& text);

// `text` as a record keeps it: "name=/pointer" parts in the order of their names, joined by ',',
// the types left out.
std::string recorded_mapping(const std::string& text);

// What a mapped name must not be, in the store at hand: the key items are addressed by, the
// source, the target (or a field either is inside of, for dotted paths), a name of dibs's own or
// one starting with its prefix; and no name mapped twice. Names compare caselessly where the
// server does (MySQL's columns).
struct mapped_names_rules {
  std::string key, source, target;
  std::vector<std::string> own;  // the fields dibs keeps its data in (MongoDB: the lock field)
  std::string own_prefix;        // and any starting so (a SQL table's dibs_ columns)
  bool caseless = false;
};

// Throws std::invalid_argument naming setting_name("map") and the name.
void check_mapped_names(const std::vector<std::string>& mapped, const mapped_names_rules& rules);

// The mapping a store opened for a command uses (recorded_settings.hpp's rule for the setting "map"):
// the one given (`text`, else the names a program set, `names`), or dibs init's record when none
// was given; `recorded` is what a record keeps of it ("" for none). `types` pairs with `names`
// ("" where none was given: a record keeps none).
struct mapping_in_effect {
  std::vector<std::string> names, types;
  std::string recorded;
};
mapping_in_effect resolve_mapping(const std::string& text, const std::vector<std::string>& names, const settings_use& use,
                                  const settings_record& record, const std::string& where);

}  // namespace dibs
