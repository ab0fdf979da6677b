#include "sql_record_table.hpp"

#include "engine/src/server_number.hpp"

#include <stdexcept>

namespace dibs::sql_common {

namespace {
class sql_table final : public record_table {
 public:
  sql_table(std::shared_ptr<record_link> link, const record_dialect& d, record_kind kind)
      : link_(std::move(link)), d_(d), kind_(std::move(kind)) {}

  record_read read(const std::string& key) override {
    const auto r = one(record_sql::read(kind_, d_, key), record_use::read);
    if (r.rows.empty() || r.rows[0].empty()) throw std::runtime_error(std::string(d_.server) + ": a read of " + kind_.table + " returned no row");
    return {record_of(r.rows[0], 1, kind_, d_.server), server_number<std::int64_t>(r.rows[0][0], d_.server)};
  }

  bool swap(const std::string& key, const std::optional<std::vector<std::int64_t>>& seen,
            const std::vector<std::int64_t>& next) override {
    // Nothing to change (a take that granted nothing): MySQL would count the row unchanged as
    // not affected, so it is not written at all.
    if (seen && *seen == next && kind_.stamp.empty()) return true;
    const auto s = seen ? record_sql::update_seen(kind_, d_, key, *seen, next) : record_sql::insert_new(kind_, d_, key, next);
    return one(s, record_use::write).affected == 1;
  }

  bool put(const std::vector<own_record>& records) override {
    std::vector<record_statement> statements;
    std::size_t carried = 0;
    for (const auto& run : record_sql::put_runs(records, link_->max_statement_bytes())) {
      std::vector<own_record> some;
      for (const auto i : run) some.push_back(records[i]);
      carried += some.size();
      statements.push_back(record_sql::put(kind_, d_, some));
    }
    if (!statements.empty()) link_->run(statements, record_use::put);
    return carried == records.size();
  }

  std::vector<own_record> list() override {
    std::vector<own_record> out;
    for (const auto& row : one(record_sql::list(kind_, d_), record_use::read).rows)
      if (auto r = record_of(row, 0, kind_, d_.server)) out.push_back(std::move(*r));
    return out;
  }

  std::uint64_t remove_older(std::chrono::microseconds age) override {
    if (kind_.stamp.empty()) throw std::logic_error(kind_.table + " keeps no stamp to age its records by");
    constexpr std::size_t most = 5000;
    std::uint64_t removed = 0;
    for (;;) {
      const auto n = one(record_sql::remove_older(kind_, d_, age.count(), most), record_use::put).affected;
      removed += n;
      if (n < most) return removed;
    }
  }

 private:
  record_result one(const record_statement& s, record_use use) {
    auto r = link_->run({s}, use);
    return r.empty() ? record_result{} : std::move(r[0]);
  }

  std::shared_ptr<record_link> link_;
  const record_dialect& d_;
  record_kind kind_;
};
}  // namespace

std::shared_ptr<record_table> sql_record_table(std::shared_ptr<record_link> link, const record_dialect& d, record_kind kind,
                                               bool create) {
  if (create) link->run({{record_sql::create_table(kind, d), {}}}, record_use::create);
  return std::make_shared<sql_table>(std::move(link), d, std::move(kind));
}

}  // namespace dibs::sql_common
