#include <dibs/stores/open_postgres_store.hpp>

#include "pg_store.hpp"

namespace dibs::pg {

bool is_postgres_uri(std::string_view uri) { return uri.rfind("postgresql://", 0) == 0 || uri.rfind("postgres://", 0) == 0; }

std::shared_ptr<admin_store> open_postgres_store(const sql_common::sql_table_options& o) {
  pg_options opts;
  static_cast<sql_common::sql_table_options&>(opts) = o;
  auto st = std::make_shared<pg_store>(opts);
  if (o.settings.record) st->write_settings_record(o.settings.result->in_effect);  // dibs init
  return st;
}

}  // namespace dibs::pg
