// dibs's own records on MySQL/MariaDB (own_records.hpp): tables beside the user's in the store's
// database, their statements record_sql's, run on the store's pooled sessions with each value
// written in quoted (a number as a number: MySQL compares a quoted number with a BIGINT as a
// double, which is not exact past 2^53).
#include <dibs/stores/mysql_store.hpp>

#include "mysql_session.hpp"

#include <adapters/sql/sql_record_table.hpp>

namespace dibs::mysql {

namespace {
class mysql_record_link final : public sql_common::record_link {
 public:
  explicit mysql_record_link(std::shared_ptr<mysql_store> store) : store_(std::move(store)) {}

  std::vector<sql_common::record_result> run(const std::vector<sql_common::record_statement>& statements,
                                             sql_common::record_use use) override {
    std::vector<sql_common::record_result> out;
    store_->in_session([&](mysql_session& c) {
      // Someone's open transaction on the table holds a put 2 s at most, and the pooled session
      // gets its server default back.
      const bool bounded = use == sql_common::record_use::put;
      if (bounded) c.execute("SET SESSION innodb_lock_wait_timeout = 2");
      struct restore {
        mysql_session& c;
        bool on;
        ~restore() {
          if (!on) return;
          try {
            c.execute("SET SESSION innodb_lock_wait_timeout = DEFAULT");
          } catch (...) {  // a lost link: the session, and its setting, are gone anyway
          }
        }
      } back{c, bounded};
      for (const auto& s : statements) {
        const auto sql = bound(c, s);
        sql_common::record_result r;
        if (use == sql_common::record_use::read) {
          r.rows = c.select(sql);
        } else {
          c.execute(sql);
          r.affected = c.affected();
        }
        out.push_back(std::move(r));
      }
    });
    return out;
  }

  std::size_t max_statement_bytes() override { return store_->max_statement_bytes(); }

 private:
  // `s` with each $n replaced by its value (record_sql writes no other '$').
  static std::string bound(mysql_session& c, const sql_common::record_statement& s) {
    std::string out;
    for (std::size_t i = 0; i < s.sql.size(); ++i) {
      if (s.sql[i] != '$') {
        out += s.sql[i];
        continue;
      }
      std::size_t n = 0;
      while (i + 1 < s.sql.size() && s.sql[i + 1] >= '0' && s.sql[i + 1] <= '9') n = n * 10 + static_cast<std::size_t>(s.sql[++i] - '0');
      const auto& p = s.params.at(n - 1);
      out += p.number ? p.value : c.quote(p.value);
    }
    return out;
  }

  std::shared_ptr<mysql_store> store_;
};
}  // namespace

std::shared_ptr<record_table> mysql_store::open_records(const record_kind& kind, bool create) {
  return sql_common::sql_record_table(std::make_shared<mysql_record_link>(shared_from_this()), sql_common::mysql_records, kind,
                                      create);
}

}  // namespace dibs::mysql
