// The backend a database test executable runs against, described once. Each of those executables
// defines this_backend() (mysql/mariadb_backend.cpp, postgres/postgres_backend.cpp,
// mongo/mongo_backend.cpp); the conformance cases in tests/conformance/ are written once against
// this description and compiled into every executable whose backend has what they need, each test
// named after its backend (BACKEND_TEST_CASE: "MariaDB: ...", tagged [mysql]).
#pragma once

#include <dibs/admin_store.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// The executable's backend, as test names and tags say it (compile definitions of each executable).
#ifndef DIBS_BACKEND_NAME
#error "a conformance case is compiled into a database test executable, which defines DIBS_BACKEND_NAME"
#endif
#define BACKEND_TEST_CASE(name, tags) TEST_CASE(DIBS_BACKEND_NAME ": " name, DIBS_BACKEND_TAG tags)

namespace dibs::test {

// A table (or collection) of the backend under test in dibs's layout, and dibs's store on it.
// Shaped like the concrete stores (seed, claim, reset_table, execute...) so the shared cases in
// tests/support/*_case.hpp take it as they take a mysql_store or a pg_store.
struct backend_table {
  std::string name;
  std::vector<std::string> where;  // the flags that name it: --store URI (and --db, --collection)
  std::shared_ptr<admin_store> store;
  std::function<void()> reset_table;  // empties it
  // SQL backends only: a statement, and one cell of a query (nullopt for NULL or no row).
  std::function<void(const std::string& sql)> execute;
  std::function<std::optional<std::string>(const std::string& select)> query_value;
  // MongoDB only: a command on the test database (JSON), its reply as extended JSON.
  std::function<std::string(const std::string& json_command)> command;

  const std::string& uri() const { return where.at(1); }
  std::size_t seed(std::size_t n, std::uint64_t seed_value) { return store->seed(n, seed_value); }
  store_stats stats_blocking() { return store->stats_blocking(); }
  awaitable<std::vector<job>> claim(claim_request r) { return store->claim(std::move(r)); }
};

// What the shared SQL cases (support/sql_*_case.hpp) take of a SQL backend.
struct sql_dialect {
  std::function<std::string(const std::string& table)> uri_for;
  // A condition true when the row's `geo` answer names its own `ip` (JSON, as the dialect reads it).
  std::string answer_names_ip;
  // Runs DDL and queries on the test database (one cell; nullopt for NULL or no row).
  std::function<void(const std::string& sql)> execute;
  std::function<std::optional<std::string>(const std::string& select)> query_value;
};

// What a SQL case spells per dialect.
struct sql_spelling {
  std::string source_column;    // the seed's originatingIp, quoted as the dialect must
  std::string thirty_s_ago;     // a timestamp expression 30 seconds before the server's now
  std::string count_tables;     // SELECT of the number of tables named '<name>' (appended, then "'")
  std::string count_columns;    // SELECT of the number of columns of table '<name>' (appended, then "'")
  std::string people_table;     // CREATE TABLE body: an id the server numbers, ip, name
  std::string user_geo_table;   // CREATE TABLE body: an id the server numbers, ip NOT NULL, geo (JSON)
  std::string answer_names_ip;  // a condition true when the row's geo answer names its own ip
  std::string true_text;  // how a boolean true reads as text
  // The JSON of `column` as text, and the text of its `field`.
  std::function<std::string(const std::string& column)> json_as_text;
  std::function<std::string(const std::string& column, const std::string& field)> json_text;
  std::string misplaced_answer; // a condition true when a row's location does not name its originatingIp
  std::string answers_older;    // dibs_answers' stored_at moved 2 hours back (an UPDATE's SET value)
  // An INSERT of `values` into `table` that does nothing where the key is taken.
  std::function<std::string(const std::string& table, const std::string& values)> insert_ignore;
  // The statement that sets the comment of `table`, and the query that reads it back.
  std::function<std::string(const std::string& table, const std::string& comment)> set_comment;
  std::function<std::string(const std::string& table)> comment_of;
  // Queries whose cells, joined with '|', name the objects (tables, functions) named like dibs bench's scratch.
  std::vector<std::string> bench_scratch;
  // The columns of a table whose foreign key `parent` points at `table`'s id, and what the server
  // says when a referenced row is deleted (in part).
  std::function<std::string(const std::string& table)> child_columns;
  std::string foreign_key_refusal;
  // Statements that make every DELETE on `table` fail for a reason dibs does not know.
  std::function<std::vector<std::string>(const std::string& table)> break_deletes;
  // Statements that make `table` refuse (a user's trigger) the answer and the delete of row `id`.
  std::function<std::vector<std::string>(const std::string& table, const std::string& id)> refuse_completion;
  std::string json_type;  // a JSON column's type: JSON, JSONB
  // Statements that make `table` as an earlier dibs made it, with dibs's columns under plain names
  // (lock_by, ..., failed_at) and its claim column or index: columns id, ip, geo (JSON).
  std::function<std::vector<std::string>(const std::string& table)> earlier_dibs_table;
  // What the claim object of `table` reads (MySQL: dibs_open's expression; PostgreSQL: the claim
  // index's definition), as the server says it.
  std::function<std::string(const std::string& table)> claim_object_query;
};

// What dibs's own messages and tables look like on this backend.
struct backend_facts {
  std::string noun;         // what dibs calls a place of this store: table, collection
  std::string in_database;  // how a refusal names the test database: "in database dibs_test"
  // What a table without dibs's columns is refused for lacking: "(geo, dibs_lock_by, ...)".
  std::function<std::string(const std::string& table)> lacks;
  std::string before_or_run;  // what separates the statements that add them from "or run: "
  // How the first of those statements begins.
  std::function<std::string(const std::string& table)> alter_begins;
  int columns_after_init = 0;  // a three-column table's columns after dibs init
};

// Answers a SQL store refuses, each to fail alone with the server's reason (conformance/sql_poison.cpp).
struct poison_row {
  int index;          // which of the 300 rows
  std::string kind;   // what its answer is: deep (JSON nested 34 levels), refuse, trigger, nul (an escaped NUL), longfail
  std::string error;  // what its error column says: the whole of it, or (`prefix`) how it begins
  bool prefix = false;
};
struct poison_facts {
  // Makes `table` the user's own as it may be: a 300-byte error column, a policy that refuses.
  std::function<std::vector<std::string>(const std::string& table)> setup;
  std::function<std::vector<poison_row>(const std::string& table)> rows;
  std::size_t longest_error = 0;  // how long the error column's shortened 70 KB reason may be
};

struct backend {
  std::string name;  // MariaDB, PostgreSQL, MongoDB
  std::function<std::string()> base_uri;  // the database, no table named
  std::function<std::string(const std::string& name)> uri_for;  // --store naming `name` (nothing is opened)
  // The flags that name `name` (--store, and --db, --collection), nothing opened; whether it exists.
  std::function<std::vector<std::string>(const std::string& name)> where_for;
  std::function<bool(const std::string& name)> exists;
  std::function<std::string(const std::string& prefix)> unique_name;
  // Opens dibs's store on `name` (creating it empty when missing).
  std::function<backend_table(const std::string& name)> open;
  // Another client of `name` (as a shard opens one), deleting what it completes (--on-done delete)
  // when `deleting`.
  std::function<std::shared_ptr<admin_store>(const std::string& name, bool deleting)> client;
  // A fresh, empty table named after `prefix`.
  backend_table fresh(const std::string& prefix) const {
    auto t = open(unique_name(prefix));
    t.reset_table();
    return t;
  }
  std::optional<sql_spelling> sql;  // nullopt for MongoDB
  backend_facts facts;
  poison_facts poison;
  const sql_spelling& sql_of() const { return sql.value(); }
  // Its dialect, statements run on one store of the test database (opened at the first: not
  // when the executable starts, as it does to list its tests, with no server).
  sql_dialect dialect() const {
    auto admin = [this]() -> backend_table& {
      static auto t = open("cases_admin");
      return t;
    };
    return {uri_for, sql_of().answer_names_ip, [admin](const std::string& sql) { admin().execute(sql); },
            [admin](const std::string& select) { return admin().query_value(select); }};
  }
};

const backend& this_backend();
// Every row of every table (or every document of every collection) in the test database, as
// text: what a search for a secret written at rest reads (the server's own dump tool for SQL:
// mariadb-dump, pg_dump; every collection's documents for MongoDB).
std::string everything_in_database();
// The same, as the conformance cases name it.
inline const backend& db = this_backend();

// Whether a SQL backend's database has a table `name`.
inline bool sql_table_exists(const backend& b, const std::string& name) {
  return b.dialect().query_value(b.sql_of().count_tables + name + "'") == std::optional<std::string>("1");
}

}  // namespace dibs::test
