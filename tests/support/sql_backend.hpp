// A SQL backend's description (support/backend.hpp) built from its store's type: what both
// MariaDB and PostgreSQL do alike (tables named in the URI's ?table=, dibs's store opened on
// them, clients that delete what they complete); each gives its name, its server and its SQL.
#pragma once

#include "support/backend.hpp"
#include "support/server_env.hpp"

#include <functional>
#include <memory>
#include <string>

namespace dibs::test {

// `Store` is mysql_store or pg_store, `Options` its options; `tune_client` sets what a shard's
// client of the table has besides.
template <class Store, class Options>
backend sql_backend(std::string name, std::function<std::string()> base_uri, std::function<void(Options&)> tune_client,
                    sql_spelling sql, backend_facts facts, poison_facts poison) {
  auto options = [base_uri](const std::string& table) {
    Options o;
    o.uri = with_table(base_uri(), table);
    return o;
  };
  backend b;
  b.name = std::move(name);
  b.base_uri = base_uri;
  b.uri_for = [base_uri](const std::string& table) { return with_table(base_uri(), table); };
  b.where_for = [base_uri](const std::string& table) {
    return std::vector<std::string>{"--store", with_table(base_uri(), table)};
  };
  b.exists = [](const std::string& table) { return sql_table_exists(this_backend(), table); };
  b.unique_name = unique_name;
  b.open = [options](const std::string& table) {
    const auto o = options(table);
    auto s = std::make_shared<Store>(o);
    return backend_table{table, {"--store", o.uri}, s, [s] { s->reset_table(); },
                         [s](const std::string& statement) { s->execute(statement); },
                         [s](const std::string& select) { return s->query_value(select); }};
  };
  b.client = [options, tune_client](const std::string& table, bool deleting) -> std::shared_ptr<admin_store> {
    auto o = options(table);
    if (tune_client) tune_client(o);
    if (deleting) o.done = decltype(o.done)::remove;
    return std::make_shared<Store>(o);
  };
  b.sql = std::move(sql);
  b.facts = std::move(facts);
  b.poison = std::move(poison);
  return b;
}

}  // namespace dibs::test
