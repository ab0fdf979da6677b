// The answers kept in the store on MySQL/MariaDB (`--reuse-answers store`; answer_store.hpp): one
// row per distinct request in the table `dibs_answers` of the store's database, created on first
// use (dibs's own table, next to the user's, like dibs_rate). A lookup is one SELECT aged by the
// server's clock; a keep one autocommitted INSERT ... ON DUPLICATE KEY UPDATE.
#pragma once

#include <adapters/mysql/mysql_store.hpp>

#include <dibs/answer_store.hpp>

#include <memory>
#include <string>

namespace dibs::sql {

// The statements, as pure functions of quoted values (tests read them).
namespace answers_sql {
std::string create_table();
std::string find(const std::string& digest_quoted, std::chrono::milliseconds ttl);
std::string keep(const std::string& digest_quoted, const std::string& request_quoted, const std::string& answer_quoted);
}  // namespace answers_sql

class mysql_answers final : public answer_store {
 public:
  // Creates the table when it is missing.
  explicit mysql_answers(std::shared_ptr<mysql_store> store);

  std::optional<std::string> find(const answer_key& k, std::chrono::milliseconds ttl) override;
  void keep(const answer_key& k, const std::string& answer) override;

 private:
  std::shared_ptr<mysql_store> store_;
};

}  // namespace dibs::sql
