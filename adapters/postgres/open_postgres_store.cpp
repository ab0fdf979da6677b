#include <dibs/stores/open_postgres_store.hpp>

#include <dibs/setting_error.hpp>

#include "pg_store.hpp"

#include <stdexcept>

namespace dibs::pg {

bool is_postgres_uri(std::string_view uri) { return uri.rfind("postgresql://", 0) == 0 || uri.rfind("postgres://", 0) == 0; }

std::shared_ptr<admin_store> open_postgres_store(const std::string& uri, const pg_flags& flags) {
  if (flags.on_done != "mark" && flags.on_done != "delete")
    throw std::invalid_argument(setting_name("on_done") + " '" + flags.on_done + "': expected mark or delete");
  if (flags.claim != "batch" && flags.claim != "skip-locked")
    throw std::invalid_argument(setting_name("claim") + " '" + flags.claim + "': PostgreSQL stores claim with skip-locked only");
  pg_options o;
  o.uri = uri;
  o.source = flags.source;
  o.target = flags.target;
  o.mapped_columns = flags.mapped_columns;
  o.map = flags.map;
  o.more_columns = flags.more_columns;
  o.done = flags.on_done == "delete" ? on_done::remove : on_done::mark;
  o.create_table = flags.create_schema;
  o.add_columns = flags.add_columns;
  o.target_is_new = flags.target_is_new;
  o.settings = flags.settings;
  auto st = std::make_shared<pg_store>(o);
  if (flags.settings.record) st->write_settings_record(flags.settings.result->in_effect);  // dibs init
  return st;
}

}  // namespace dibs::pg
