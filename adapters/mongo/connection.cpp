#include "connection.hpp"

#include "driver_log.hpp"
#include "write_concern.hpp"

#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>
#include "engine/src/uri_redact.hpp"

#include <mutex>
#include <stdexcept>

namespace dibs::mongo {

namespace {

std::once_flag g_init;
void ensure_driver() {
  // mongoc_cleanup() is never called: the driver lives as long as the process.
  std::call_once(g_init, [] {
    install_driver_log();
    mongoc_init();
  });
}

// Command monitoring's started event: one more command, unless it is the driver's own chatter.
void count_command(const mongoc_apm_command_started_t* event) {
  const std::string name = mongoc_apm_command_started_get_command_name(event);
  if (name == "hello" || name == "isMaster" || name == "ismaster" || name == "ping" || name == "endSessions" ||
      name == "buildInfo" || name == "killCursors")
    return;
  static_cast<std::atomic<std::uint64_t>*>(mongoc_apm_command_started_get_context(event))
      ->fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

collection_ptr primary_collection(mongoc_client_t* client, const std::string& db, const std::string& name) {
  static const mongoc_read_prefs_t* primary = mongoc_read_prefs_new(MONGOC_READ_PRIMARY);  // process lifetime
  collection_ptr coll(mongoc_client_get_collection(client, db.c_str(), name.c_str()));
  mongoc_collection_set_read_prefs(coll.get(), primary);
  return coll;
}

std::chrono::milliseconds connection::server_selection_timeout() const {
  return std::chrono::milliseconds(mongoc_uri_get_option_as_int32(uri_.get(), MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 30000));
}

connection::connection(const std::string& uri, std::size_t clients, bool count_commands) {
  ensure_driver();
  guard_driver_secrets(uri);  // before the driver sees it: its messages may quote it
  redacted_ = redact_uri(uri);
  bson_error_t err;
  uri_.reset(mongoc_uri_new_with_error(uri.c_str(), &err));
  if (!uri_) throw std::invalid_argument("bad " + setting_name("store") + " URI '" + redacted_ + "': " + redact_driver_message(err.message, uri));
  mongoc_uri_t* u = uri_.get();
  // Fail fast when nothing answers, unless the user chose otherwise in the URI.
  if (!mongoc_uri_has_option(u, MONGOC_URI_SERVERSELECTIONTIMEOUTMS))
    mongoc_uri_set_option_as_int32(u, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, 5000);
  if (!mongoc_uri_has_option(u, MONGOC_URI_SOCKETTIMEOUTMS)) mongoc_uri_set_option_as_int32(u, MONGOC_URI_SOCKETTIMEOUTMS, 60000);
  if (!mongoc_uri_get_option_as_utf8(u, MONGOC_URI_APPNAME, nullptr)) mongoc_uri_set_appname(u, "dibs");
  if (const auto wc = apply_write_concern(u, redacted_); wc.majority) log::info("mongodb: ", wc.description);
  else log::warn("mongodb: ", wc.description, ": a failover can roll back a write fewer than a majority acknowledged");
  pool_.reset(mongoc_client_pool_new(u));
  if (!pool_) throw std::invalid_argument("bad " + setting_name("store") + " URI '" + redacted_ + "': the driver refused its options");
  mongoc_client_pool_set_error_api(pool_.get(), MONGOC_ERROR_API_VERSION_2);
  // A URI's maxPoolSize is the user's bound, kept as given (callers then wait their turn for a
  // client); otherwise one client for each of the store's callers.
  if (!mongoc_uri_has_option(u, MONGOC_URI_MAXPOOLSIZE)) mongoc_client_pool_max_size(pool_.get(), static_cast<uint32_t>(clients));
  if (count_commands) {
    // Before the first client leaves the pool: the driver refuses monitors after that.
    mongoc_apm_callbacks_t* monitor = mongoc_apm_callbacks_new();
    mongoc_apm_set_command_started_cb(monitor, &count_command);
    mongoc_client_pool_set_apm_callbacks(pool_.get(), monitor, commands_.get());
    mongoc_apm_callbacks_destroy(monitor);
  }
}

}  // namespace dibs::mongo
