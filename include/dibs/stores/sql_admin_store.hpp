// The operator's questions (admin_store: the failed items, their reasons, the lease holders, a
// worker's release, the pre-flight's samples) answered once for both SQL stores. A store's
// dialect only says how to ask: it runs the question's statement, in its own words and quoting,
// on a connection of its own and hands back the rows; what the rows mean, the paging and the
// checks are here (adapters/sql/sql_admin.cpp), the same for MySQL/MariaDB and PostgreSQL.
#pragma once

#include <dibs/admin_store.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dibs::sql_common {

// A question a dialect turns into its statement (each returns the columns named).
namespace ask {
struct table_columns {};   // the table's column names, one a row
struct done_sample {};     // one done row with a usable source: sql_rows.hpp's sampled_row
struct open_sample {       // up to `limit` open rows, those with a usable source first
  bool with_source = true;      // the table has the source column
  bool non_null_source = true;  // only rows whose source is not NULL
  std::size_t limit = 1;
};
struct failed_page {  // the failed rows `which` selects: sql_rows.hpp's failed_item_of
  const retry_filter* which = nullptr;
  std::size_t limit = 0;
  std::size_t offset = 0;
};
struct failure_reasons {  // sql_rows.hpp's failure_reason_of
  std::size_t top = 0;
};
struct lease_holders {};  // sql_rows.hpp's lease_holder_of
struct no_data {};        // one count: the done rows whose target's "status" is "fail"
}  // namespace ask
using admin_question = std::variant<ask::table_columns, ask::done_sample, ask::open_sample, ask::failed_page,
                                    ask::failure_reasons, ask::lease_holders, ask::no_data>;

// A change a dialect turns into its statement; it answers how many rows it changed.
namespace change {
struct retry_failed {  // the failed rows `which` selects back to pending
  const retry_filter* which = nullptr;
};
struct release_worker {  // every lease of the worker (NAME or NAME-<shard>) cleared
  std::string name;
};
}  // namespace change
using admin_change = std::variant<change::retry_failed, change::release_worker>;

using admin_row = std::vector<std::optional<std::string>>;

// What a SQL store's dialect does for the questions: run, and nothing else.
class sql_admin_link {
 public:
  virtual std::vector<admin_row> ask(const admin_question& q) = 0;
  virtual std::uint64_t change(const admin_change& c) = 0;
  // What the shared part must know of the server and the table.
  struct facts {
    const char* server = "";  // its name in the errors of a cell that is no number ("PostgreSQL")
    bool names_fold_case = false;  // MySQL/MariaDB compares column names without case; PostgreSQL's quoted names are exact
    std::string source;            // the table's source column
  };
  virtual facts admin_facts() const = 0;
  // A row of ask::open_sample as the pre-flight's sample (sql_rows.hpp's sampled_row, with the
  // columns the store's claim reads typed, as a claim reads them).
  virtual pending_sample sampled(const admin_row& row, bool has_source, std::vector<std::string> columns) const = 0;

 protected:
  ~sql_admin_link() = default;
};

std::uint64_t retry_failed(sql_admin_link& link, const retry_filter& which);
void list_failed(sql_admin_link& link, const retry_filter& which, const std::function<void(const failed_item&)>& each);
std::vector<failure_reason> failure_reasons(sql_admin_link& link, std::size_t top);
std::optional<std::uint64_t> no_data_count(sql_admin_link& link);
std::vector<lease_holder> lease_holders(sql_admin_link& link);
std::uint64_t release_worker(sql_admin_link& link, const std::string& name);
std::vector<pending_sample> sample_pending_items(sql_admin_link& link, std::size_t n);
std::optional<pending_sample> sample_done(sql_admin_link& link);

// A SQL store (`Base`: admin_store or blocking_store) whose admin_store answers are the ones above.
template <class Base>
class sql_admin_store : public Base, protected sql_admin_link {
 public:
  using Base::Base;

  std::uint64_t retry_failed(const retry_filter& which) override { return sql_common::retry_failed(*this, which); }
  void list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) override {
    sql_common::list_failed(*this, which, each);
  }
  std::vector<failure_reason> failure_reasons(std::size_t top) override { return sql_common::failure_reasons(*this, top); }
  std::optional<std::uint64_t> no_data_count() override { return sql_common::no_data_count(*this); }
  std::vector<lease_holder> lease_holders() override { return sql_common::lease_holders(*this); }
  std::uint64_t release_worker(const std::string& name) override { return sql_common::release_worker(*this, name); }
  std::optional<pending_sample> sample_done() override { return sql_common::sample_done(*this); }
  std::vector<pending_sample> sample_pending_items(std::size_t n) override { return sql_common::sample_pending_items(*this, n); }
};

}  // namespace dibs::sql_common
