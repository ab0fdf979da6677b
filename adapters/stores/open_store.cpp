#include <dibs/stores/open_store.hpp>

#include <dibs/stores/jsonl_store.hpp>
#include <adapters/jsonl/piped_jsonl.hpp>
#include <dibs/stores/mongo_store.hpp>
#include <dibs/stores/mysql_store.hpp>
#include <dibs/stores/open_postgres_store.hpp>

#include <dibs/field_mapping.hpp>
#include <dibs/setting_error.hpp>
#include "engine/src/uri_redact.hpp"

namespace dibs {

namespace {

// A map's ":TYPE" shapes a SQL table's column; a document or a line keeps each value as the
// answer types it.
void refuse_column_types(const std::string& map, const char* store) {
  for (const auto& part : split_mapping(map, setting_name("map")))
    if (!part.column_type.empty())
      throw setting_error("map", part.name + "=" + part.pointer + ":" + part.column_type + ": " + store +
                                     " keeps each value as the answer types it; a :TYPE is for a SQL table's column");
}

std::shared_ptr<admin_store> open_jsonl(const store_uri& u, const store_options& o) {
  if (u.path == "-" && !o.create_schema)
    throw setting_error("store", "'jsonl:-': stdin can be enriched, not inspected (dibs status needs a file)");
  // stdin to stdout, or files: a journal named "-.journal" would be nobody's intent.
  if (u.path == "-" && o.out != "-")
    throw setting_error("out", "'" + o.out + "': " + setting_name("store") + " jsonl:- (stdin) writes to stdout only: give " + setting_name("out") + " -");
  if (u.path != "-" && o.out == "-")
    throw setting_error("out", "'-' (stdout) goes with " + setting_name("store") + " jsonl:- (stdin); with a file, give an output file");
  refuse_column_types(o.map, "a JSON Lines file");
  // The mapping as given (a file keeps no record); its names checked against the line's own.
  auto mapped = resolve_mapping(o.map, o.mapped_fields, settings_use{}, {}, "").names;
  check_mapped_names(mapped, {o.id_field, o.source, o.target, {}, "", false});
  jsonl::jsonl_options j;
  j.in = u.path;
  j.out = o.out;
  j.source = o.source;
  j.more_fields = o.more_fields;
  j.mapped_fields = mapped;
  j.target = o.target;
  j.target_given = o.settings.was_given("target");
  j.read_only = !o.create_schema || o.out.empty();
  j.id_field = o.id_field;
  if (u.path == "-" && !o.id_field.empty())
    throw setting_error("id_field", "'" + o.id_field + "': names the lines of a file; stdin's lines are named by their number");
  if (u.path == "-") return std::make_shared<jsonl::piped_jsonl_store>(j);
  return std::make_shared<jsonl::jsonl_store>(j);
}

// What both SQL stores take, from a command's options; `server` names the store in a refusal.
sql_common::sql_table_options table_options(const store_uri& u, const store_options& o, const char* server) {
  if (o.on_done != "mark" && o.on_done != "delete")
    throw setting_error("on_done", "'" + o.on_done + "': expected mark or delete");
  if (o.claim != "batch" && o.claim != "skip-locked")
    throw setting_error("claim", "'" + o.claim + "': " + server + " stores claim with skip-locked only");
  sql_common::sql_table_options t;
  t.uri = u.driver_uri;
  t.source = o.source;
  t.target = o.target;
  t.mapped_columns = o.mapped_fields;
  t.map = o.map;
  t.more_columns = o.more_fields;
  t.done = o.on_done == "delete" ? sql_common::on_done::remove : sql_common::on_done::mark;
  t.create_table = o.create_schema && o.create_table;
  t.add_columns = o.add_columns;
  t.target_is_new = o.target_is_new;
  t.settings = o.settings;
  return t;
}

std::shared_ptr<admin_store> open_mysql(const store_uri& u, const store_options& o) {
  mysql::mysql_options m;
  static_cast<sql_common::sql_table_options&>(m) = table_options(u, o, "MySQL/MariaDB");
  m.threads = o.threads;
  return std::make_shared<mysql::mysql_store>(m);  // it records the settings when asked
}

std::shared_ptr<admin_store> open_mongodb(const store_uri& u, const store_options& o) {
  const auto strategy = mongo::parse_strategy(o.claim);
  if (!strategy)
    throw setting_error("claim", "'" + o.claim + "': expected update-find, find-and-modify, batch or lock-collection");
  refuse_column_types(o.map, "MongoDB");
  mongo::mongo_options m;
  m.uri = u.driver_uri;
  // The option overrides the URI, the URI the default (test.message, as before URIs had a path).
  m.db = !o.database.empty() ? o.database : !u.database.empty() ? u.database : "test";
  m.collection = !o.collection.empty() ? o.collection : !u.collection.empty() ? u.collection : "message";
  m.names.source = o.source;
  m.names.more = o.more_fields;
  m.names.mapped = o.mapped_fields;
  m.map = o.map;
  m.names.target = o.target;
  m.names.lock = o.lock_field;
  m.strategy = *strategy;
  m.threads = o.threads;
  m.create_indexes = o.create_schema;
  m.detect_lock_collection = !o.create_schema;
  m.create_collection = o.create_table;
  m.count_commands = o.count_commands;
  m.settings = o.settings;
  m.require_target = !o.create_table;
  m.target_is_new = o.target_is_new;
  return std::make_shared<mongo::mongo_store>(m);
}

std::shared_ptr<admin_store> open_postgresql(const store_uri& u, const store_options& o) {
  return pg::open_postgres_store(table_options(u, o, "PostgreSQL"));  // it records the settings when asked
}

}  // namespace

std::shared_ptr<admin_store> open_store(const std::string& uri, const store_options& o) {
  const auto u = parse_store_uri(uri);
  // A new store: its case here, its prefixes in store_uri.cpp.
  switch (u.kind) {
    case store_kind::jsonl: return open_jsonl(u, o);
    case store_kind::mysql: return open_mysql(u, o);
    case store_kind::mongodb: return open_mongodb(u, o);
    case store_kind::postgresql: return open_postgresql(u, o);
  }
  throw setting_error("store", "'" + redact_uri(uri) + "': no store opens it");
}

}  // namespace dibs
