#include "open_shared_rate.hpp"

#include <adapters/mongo/mongo_shared_rate.hpp>
#include <adapters/mysql/mysql_shared_rate.hpp>
#include <adapters/postgres/pg_shared_rate.hpp>

namespace dibs {

shared_rate_opening open_shared_rate(const std::shared_ptr<admin_store>& st) {
  if (auto m = std::dynamic_pointer_cast<mysql::mysql_store>(st)) return {std::make_shared<mysql::mysql_shared_rate>(m)};
  if (auto p = std::dynamic_pointer_cast<pg::pg_store>(st)) return {std::make_shared<pg::pg_shared_rate>(p)};
  if (auto m = std::dynamic_pointer_cast<mongo::mongo_store>(st)) return {mongo::make_mongo_shared_rate(m)};
  return {nullptr, "a file is worked on by one process at a time", true};
}

}  // namespace dibs
