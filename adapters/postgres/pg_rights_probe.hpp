// The rights a run needs on a PostgreSQL table, checked before it starts: the probes
// (dibs/rights_refusal.hpp) with this dialect's quoting -- a statement-level trigger they fire is
// rolled back with them -- and the GRANT that gives those rights. Pure
// (tests/unit/test_pg_protocol.cpp).
#pragma once

#include <adapters/postgres/pg_protocol.hpp>

#include "engine/src/rights_refusal.hpp"

#include <string>
#include <vector>

namespace dibs::pg {

// Read and update every column a run touches; delete too when `deletes` (on_done delete).
std::vector<rights_probe> rights_probes(const table_names& n, bool deletes);

// GRANT <rights_needed> ON "table" TO "role", for current_user's role.
std::string grant_statement(const table_names& n, const std::string& role, bool deletes);

}  // namespace dibs::pg
