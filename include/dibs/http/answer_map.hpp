// `map 'country=/country,city=/city,lat=/loc/lat'`: which members of an answer (RFC 6901 JSON
// Pointers) go into which fields of the item. The processor writes the mapped values as one
// object (answer_mapping.hpp) into the target, which stays what "done" means; a store that takes
// a mapping (JSON Lines, MongoDB) also writes each value into its own field, typed as the answer
// has it (a number stays a number, an object an object; a member the answer lacks is null).
#pragma once

#include <dibs/http/json_pointer.hpp>

#include <string>
#include <vector>

namespace dibs::http {

struct answer_map {
  struct entry {
    std::string name;  // the item's field (a name of letters, digits and '_')
    json_pointer at;   // the answer's member
    std::string column_type;  // ":TYPE" (a SQL column's, for dibs init to add it); "" when none
  };
  std::vector<entry> entries;

  bool empty() const { return entries.empty(); }
  std::vector<std::string> names() const;
};

// "name=/pointer,name=/pointer:TYPE" (dibs/field_mapping.hpp) added to `into`. Throws std::invalid_argument naming `setting`:
// no '=', a name that is not a plain identifier or given twice, a pointer that is no JSON Pointer.
void parse_answer_map(const std::string& text, const std::string& setting, answer_map& into);

}  // namespace dibs::http
