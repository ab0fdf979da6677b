// The call budget kept for every process on MySQL/MariaDB (`budget N/day`; budget_store.hpp):
// one row per key in the table `dibs_budget` of the store's database, created on the first take
// (dibs's own table, next to the user's). A take is one autocommitted UPDATE that adds what it
// grants (never past the limit) and leaves the grant in a session variable; the row is never
// locked across round trips.
#pragma once

#include <dibs/stores/mysql_store.hpp>

#include "engine/src/budget_store.hpp"

#include <memory>
#include <string>

namespace dibs::mysql {

namespace budget_sql {
std::string create_table();
std::string ensure_row(const std::string& key_quoted);
std::string take(const std::string& key_quoted, std::uint64_t want, std::uint64_t limit);
std::string taken(const std::string& key_quoted);  // the grant, the row's used
std::string give_back(const std::string& key_quoted, std::uint64_t n);
std::string records();
}  // namespace budget_sql

class mysql_budget final : public budget_store {
 public:
  explicit mysql_budget(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {}
  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override;
  void give_back(const std::string& key, std::uint64_t n) override;
  std::vector<budget_record> records() override;

 private:
  std::shared_ptr<mysql_store> store_;
  bool created_ = false;
};

}  // namespace dibs::mysql
