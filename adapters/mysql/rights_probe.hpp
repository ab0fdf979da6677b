// The rights a run needs on a MySQL/MariaDB table, checked before it starts: the probes
// (dibs/rights_refusal.hpp) with this dialect's quoting, and the GRANT that gives those rights.
// Pure (tests/unit/test_sql_protocol.cpp).
#pragma once

#include <adapters/mysql/mysql_protocol.hpp>

#include "engine/src/rights_refusal.hpp"

#include <string>
#include <vector>

namespace dibs::mysql {

// Read and update every column a run touches; delete too when `deletes` (on_done delete).
std::vector<rights_probe> rights_probes(const table_names& n, bool deletes);

// GRANT <rights_needed> ON `db`.`table` TO 'user'@'host', for CURRENT_USER()'s "user@host".
std::string grant_statement(const table_names& n, const std::string& database, const std::string& current_user, bool deletes);

}  // namespace dibs::mysql
