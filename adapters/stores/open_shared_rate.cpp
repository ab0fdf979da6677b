#include "open_shared_rate.hpp"

#include <adapters/mongo/mongo_store.hpp>
#include <adapters/mysql/mysql_shared_rate.hpp>
#include <adapters/postgres/pg_shared_rate.hpp>

namespace dibs {

shared_rate_opening open_shared_rate(const std::shared_ptr<admin_store>& st) {
  if (auto m = std::dynamic_pointer_cast<sql::mysql_store>(st)) return {std::make_shared<sql::mysql_shared_rate>(m)};
  if (auto p = std::dynamic_pointer_cast<pg::pg_store>(st)) return {std::make_shared<pg::pg_shared_rate>(p)};
  if (std::dynamic_pointer_cast<mongo::mongo_store>(st)) return {nullptr, "MongoDB keeps no shared rate yet", false};
  return {nullptr, "a file is worked on by one process at a time", true};
}

}  // namespace dibs
