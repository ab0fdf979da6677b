// A name as PostgreSQL reads it in a statement: "name", a double quote inside doubled. Every
// statement dibs builds for a user's table quotes its names with this one function.
#pragma once

#include "adapters/sql/quoted.hpp"

namespace dibs::pg {

inline std::string q(const std::string& ident) { return sql_common::quoted(ident, '"'); }

}  // namespace dibs::pg
