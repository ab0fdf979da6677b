// The shared rate's record in a store (`rate_scope store`): MySQL/MariaDB and PostgreSQL keep
// it in their table `dibs_rate` (created on first use), MongoDB in the collection `dibs_rate`.
// nullptr for a store that has none: a JSON Lines file (one process works on it, so the
// process's own limit is the store's).
#pragma once

#include <dibs/admin_store.hpp>
#include "engine/src/shared_rate_store.hpp"

#include <memory>
#include <string>

namespace dibs {

struct shared_rate_opening {
  std::shared_ptr<shared_rate_store> record;  // nullptr: the store keeps none
  std::string none_because;                   // then: why, in the user's words
  bool expected = true;                       // false: the user will have wanted one (a warning)
};

// Throws the store's error when the table can't be created or read.
shared_rate_opening open_shared_rate(const std::shared_ptr<admin_store>& st);

}  // namespace dibs
