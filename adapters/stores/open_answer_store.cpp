#include "open_answer_store.hpp"

#include <adapters/mongo/mongo_answers.hpp>
#include <adapters/mysql/mysql_answers.hpp>
#include <adapters/postgres/pg_answers.hpp>

namespace dibs {

std::shared_ptr<answer_store> open_answer_store(const std::shared_ptr<admin_store>& st) {
  if (auto m = std::dynamic_pointer_cast<mysql::mysql_store>(st)) return std::make_shared<mysql::mysql_answers>(m);
  if (auto p = std::dynamic_pointer_cast<pg::pg_store>(st)) return std::make_shared<pg::pg_answers>(p);
  if (auto m = std::dynamic_pointer_cast<mongo::mongo_store>(st)) return mongo::make_mongo_answers(m);
  return nullptr;
}

}  // namespace dibs
