// The field names a MongoDB run works with, all configurable from the command line.
//
// Everything dibs keeps in a user's document lives under one field, `_dibs` by default: a name a
// document of the user's does not have (dibs init refuses a collection whose documents have it
// of their own). An earlier dibs kept it in `lock`; a collection it worked on, with no
// lock_field given nor recorded, goes on with `lock` (earlier_lock_field; docs/stores.md).
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <string>
#include <vector>

namespace dibs::mongo {

inline constexpr const char* default_lock_field = "_dibs";
inline constexpr const char* earlier_lock_field = "lock";  // an earlier dibs's default

struct field_names {
  std::string source = dibs::ipapi::source_field;  // may be a dotted path
  std::string target = dibs::ipapi::target_field;
  std::string lock = default_lock_field;  // holds {by, token, until, attempts} and, for failed items, failed{}
  // More fields (dotted paths) a claimed document hands the processor: a request's headers and body.
  std::vector<std::string> more;
  // map's fields: a completion sets each member of its answer (the mapped values) as a field too.
  std::vector<std::string> mapped;

  std::string lock_by() const { return lock + ".by"; }
  std::string lock_token() const { return lock + ".token"; }
  std::string lock_until() const { return lock + ".until"; }
  std::string lock_attempts() const { return lock + ".attempts"; }
  std::string lock_failed() const { return lock + ".failed"; }
};

}  // namespace dibs::mongo
