// The scratch table (MongoDB: collection) `dibs bench` drains, and the only kind it touches: its
// name is dibs_bench_<12 hex digits> (bench_figures.hpp: scratch_name) AND it carries a marker
// that a user's table never does by accident:
//
//   MySQL/MariaDB  the table comment 'dibs bench scratch'
//   PostgreSQL     the table comment (COMMENT ON TABLE) 'dibs bench scratch'
//   MongoDB        a document {_id: "dibs_bench_marker", location: {dibs_bench: "scratch"}} (its
//                  target is set, so it is never claimed; it counts as one done document)
//
// Every open for a run and every drop checks both first, looking only (nothing is created or
// indexed before the check), and refuses with std::invalid_argument (exit 2) otherwise.
#pragma once

#include "store_flags.hpp"

#include <dibs/stores/store_uri.hpp>

#include <dibs/admin_store.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs::cli {

class bench_scratch {
 public:
  explicit bench_scratch(store_flags flags);
  virtual ~bench_scratch() = default;

  store_kind kind() const { return kind_; }
  // The store on a new scratch `name`: created, marked, with `docs` pending items.
  std::shared_ptr<admin_store> create(const std::string& name, std::size_t docs, const std::string& strategy);
  // The store on the existing scratch `name`, claiming with `strategy` (counting its statements).
  // Refuses a name that is not a marked scratch, before anything is written to it.
  std::shared_ptr<admin_store> open(const std::string& name, const std::string& strategy);
  // Drops the marked scratch `name` (MongoDB: and its lock collection); false when there is no
  // such marked scratch (nothing is dropped then).
  bool drop(const std::string& name);
  // The marked scratches in the database the --store URI names.
  std::vector<std::string> leftovers();
  // The store's own words for where the scratch lives ("database geo").
  std::string where() const;

 protected:
  // The store on `name`, looking only (no table, no index, no marker made); null when there is
  // no such table.
  std::shared_ptr<admin_store> look_at(const std::string& name);
  std::shared_ptr<admin_store> open_with(const std::string& name, const std::string& strategy, bool create);
  // Whether `name` is a scratch (its name) and carries the marker.
  bool is_marked(const std::string& name);
  virtual bool has_marker(admin_store& looking, const std::string& name) = 0;
  virtual void mark(admin_store& st, const std::string& name) = 0;
  virtual void drop_table(admin_store& looking, const std::string& name) = 0;
  // SQL: a store opened to look at a missing table refuses it, listing the tables there: the
  // database's tables, without a statement of our own (there is no table to open a store on).
  std::vector<std::string> listed_by_refusal();
  // Names in the database that look like scratches (marked or not).
  virtual std::vector<std::string> candidates() = 0;

  store_flags flags_;
  store_kind kind_;
};

// The statements (MongoDB: commands) `st` has sent since it opened; nullopt when it does not count.
std::optional<std::uint64_t> statements_sent(const admin_store& st);

// The scratch for the store --store names; throws std::invalid_argument for a file (jsonl:).
std::unique_ptr<bench_scratch> make_bench_scratch(const store_flags& flags);

}  // namespace dibs::cli
