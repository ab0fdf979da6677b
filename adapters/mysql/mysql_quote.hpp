// A name as MySQL/MariaDB reads it in a statement: `name`, a backtick inside doubled. Every
// statement dibs builds for a user's table quotes its names with this one function.
#pragma once

#include "adapters/sql/quoted.hpp"

namespace dibs::mysql {

inline std::string q(const std::string& ident) { return sql_common::quoted(ident, '`'); }

}  // namespace dibs::mysql
