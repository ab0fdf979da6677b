// The call budget kept for every process on PostgreSQL (`budget N/day`; budget_store.hpp): one
// row per key in the table `dibs_budget` (the search path's schema, next to the user's table),
// created on the first take. A take is one autocommitted INSERT ... ON CONFLICT DO UPDATE that
// adds what it grants (never past the limit) and returns the grant, on a connection of its own.
#pragma once

#include <adapters/postgres/pg_side_connection.hpp>
#include <adapters/postgres/pg_store.hpp>

#include "engine/src/budget_store.hpp"

#include <memory>
#include <string>

namespace dibs::pg {

namespace budget_sql {
std::string create_table();
statement take(const std::string& key, std::uint64_t want, std::uint64_t limit);  // granted, used
statement give_back(const std::string& key, std::uint64_t n);
statement records();
}  // namespace budget_sql

class pg_budget final : public budget_store {
 public:
  explicit pg_budget(std::shared_ptr<pg_store> store) : side_(std::move(store)) {}
  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override;
  void give_back(const std::string& key, std::uint64_t n) override;
  std::vector<budget_record> records() override;

 private:
  pg_side_connection side_;
  bool created_ = false;
};

}  // namespace dibs::pg
