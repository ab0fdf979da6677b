// dibs's own records on PostgreSQL (own_records.hpp): tables in the search path's schema beside
// the user's, their statements record_sql's with bound values, on two connections of their own
// (pg_side_connection.hpp: each statement ends after 2 s): reads on one, writes on the other, so
// a read never waits behind a large put.
#include "pg_store.hpp"

#include <adapters/postgres/pg_side_connection.hpp>
#include <adapters/sql/sql_record_table.hpp>

namespace dibs::pg {

namespace {
class pg_record_link final : public sql_common::record_link {
 public:
  explicit pg_record_link(std::shared_ptr<pg_store> store) : reads_(store), writes_(std::move(store)) {}

  std::vector<sql_common::record_result> run(const std::vector<sql_common::record_statement>& statements,
                                             sql_common::record_use use) override {
    std::vector<sql_common::record_result> out;
    for (const auto& s : statements) {
      if (use == sql_common::record_use::create) {
        writes_.create_table(s.sql);
        out.emplace_back();
        continue;
      }
      statement st{s.sql, {}};
      for (const auto& p : s.params) st.params.emplace_back(p.value);
      auto& side = use == sql_common::record_use::read ? reads_ : writes_;
      const auto r = side.with([&](pg_connection& c) { return c.exec_blocking(st); });
      out.push_back({r.rows, r.affected});
    }
    return out;
  }

  // The protocol's message limit is 1 GiB; a put is kept well under it.
  std::size_t max_statement_bytes() override { return 64u << 20; }

 private:
  pg_side_connection reads_, writes_;
};
}  // namespace

std::shared_ptr<record_table> pg_store::open_records(const record_kind& kind, bool create) {
  return sql_common::sql_record_table(std::make_shared<pg_record_link>(shared_from_this()), sql_common::pg_records, kind, create);
}

}  // namespace dibs::pg
