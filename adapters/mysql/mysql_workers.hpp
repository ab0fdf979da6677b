// GET /workers, `dibs status`'s lease table and `dibs release worker` as SQL text for MySQL /
// MariaDB: plain functions, unit-tested without a server. Values come in already quoted by the
// connection.
#pragma once

#include <adapters/mysql/mysql_protocol.hpp>

#include <string>

namespace dibs::mysql {

// by, leased, expired, microseconds from NOW(6) to the earliest until and to the latest: one row per lease holder.
std::string lease_holders(const table_names& n);
// Clears every lease (live or expired) of the open rows whose lock_by is the worker's name or
// name-<digits> (dibs/worker_id.hpp's worker_owns). `name_quoted` is the name,
// `prefix_quoted` the name followed by '-', `prefix_chars` its length (worker ids are ASCII).
// Compared as bytes: the column's collation may ignore case, a worker's name does not.
std::string release_worker(const table_names& n, const std::string& name_quoted, const std::string& prefix_quoted,
                           std::size_t prefix_chars);

}  // namespace dibs::mysql
