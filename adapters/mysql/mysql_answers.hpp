// The answers kept in the store on MySQL/MariaDB (`reuse_answers store`; answer_store.hpp): one
// row per distinct request in the table `dibs_answers` of the store's database, created on first
// use (dibs's own table, next to the user's, like dibs_rate). A lookup is one SELECT aged by the
// server's clock (a consistent read: it waits for no lock); a keep one autocommitted INSERT ... ON
// DUPLICATE KEY UPDATE per batch that waits at most 2 s for a row lock (someone's open transaction
// on the table). Its columns are utf8mb4 whatever the database's default.
#pragma once

#include <dibs/stores/mysql_store.hpp>

#include "engine/src/answer_store.hpp"

#include <array>
#include <memory>
#include <string>

namespace dibs::mysql {

// The statements, as pure functions of quoted values (tests read them).
namespace answers_sql {
std::string create_table();
std::string find(const std::string& digest_quoted, std::chrono::milliseconds ttl);  // answer, age in ms
// One row per (digest, request, answer), each quoted.
std::string keep(const std::vector<std::array<std::string, 3>>& rows_quoted);
// The keep statements of `rows_quoted`, in order, each under `max_statement_bytes`
// (max_allowed_packet, less room for the statement's own words): the rows of each, by index. A
// row that no statement could carry is in none (the answer is not kept; the API is asked again).
std::vector<std::vector<std::size_t>> keep_runs(const std::vector<std::array<std::string, 3>>& rows_quoted,
                                                std::size_t max_statement_bytes);
}  // namespace answers_sql

class mysql_answers final : public answer_store {
 public:
  // Creates the table when it is missing.
  explicit mysql_answers(std::shared_ptr<mysql_store> store);

  std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) override;
  void keep(const std::vector<std::pair<answer_key, std::string>>& answers) override;

 private:
  std::shared_ptr<mysql_store> store_;
};

}  // namespace dibs::mysql
