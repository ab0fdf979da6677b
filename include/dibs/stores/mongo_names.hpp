// The field names a MongoDB run works with, all configurable from the command line.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <string>
#include <vector>

namespace dibs::mongo {

struct field_names {
  std::string source = dibs::ipapi::source_field;  // may be a dotted path
  std::string target = dibs::ipapi::target_field;
  std::string lock = "lock";  // holds {by, token, until, attempts} and, for failed items, failed{}
  // More fields (dotted paths) a claimed document hands the processor: a request's headers and body.
  std::vector<std::string> more;
  // --map's fields: a completion sets each member of its answer (the mapped values) as a field too.
  std::vector<std::string> mapped;

  std::string lock_by() const { return lock + ".by"; }
  std::string lock_token() const { return lock + ".token"; }
  std::string lock_until() const { return lock + ".until"; }
  std::string lock_attempts() const { return lock + ".attempts"; }
  std::string lock_failed() const { return lock + ".failed"; }
};

}  // namespace dibs::mongo
