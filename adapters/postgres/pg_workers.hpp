// GET /workers, `dibs status`'s lease table and `dibs release worker` as PostgreSQL statements:
// plain functions, unit-tested without a server. Every value travels as a parameter.
#pragma once

#include <adapters/postgres/pg_protocol.hpp>

#include <string>

namespace dibs::pg {

// by, leased, expired, microseconds from now() to the earliest until and to the latest: one row per lease holder.
statement lease_holders(const table_names& n);
// Clears every lease (live or expired) of the open rows whose lock_by is `name` or
// name-<digits> (dibs/worker_id.hpp's worker_owns); RETURNING nothing, the count is `affected`.
statement release_worker(const table_names& n, const std::string& name);

}  // namespace dibs::pg
