#include "driver_log.hpp"

#include "bson_ptr.hpp"

#include "engine/src/uri_redact.hpp"

#include <mongoc/mongoc.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace dibs::mongo {

std::optional<driver_message> route_driver_message(int mongoc_level, std::string_view domain,
                                                   std::string_view message) {
  if (mongoc_level == MONGOC_LOG_LEVEL_TRACE) return std::nullopt;  // a traced build's firehose
  log::level level = log::level::debug;
  if (mongoc_level <= MONGOC_LOG_LEVEL_CRITICAL) level = log::level::error;  // ERROR is 0, CRITICAL 1
  else if (mongoc_level == MONGOC_LOG_LEVEL_WARNING) level = log::level::warn;
  if (message.find("for counters") != std::string_view::npos) level = log::level::debug;
  std::string text = "mongoc (";
  text.append(domain);
  text += "): ";
  text.append(message);
  return driver_message{level, std::move(text)};
}

namespace {
std::mutex g_guarded_mutex;
std::vector<std::string>& guarded() {
  static std::vector<std::string> uris;  // process lifetime, like the driver
  return uris;
}
}  // namespace

void guard_driver_secrets(const std::string& uri) {
  std::lock_guard lock(g_guarded_mutex);
  auto& uris = guarded();
  if (std::find(uris.begin(), uris.end(), uri) == uris.end()) uris.push_back(uri);
}

std::string scrub_driver_message(const std::string& message) {
  std::lock_guard lock(g_guarded_mutex);
  std::string out = message;
  for (const auto& uri : guarded()) out = redact_driver_message(out, uri);
  return out;
}

std::string driver_error_text(const bson_error_t& e) { return scrub_driver_message(e.message); }

namespace {
void handler(mongoc_log_level_t level, const char* domain, const char* message, void*) {
  auto routed = route_driver_message(static_cast<int>(level), domain ? domain : "", message ? message : "");
  if (routed && routed->level >= log::current_level()) log::write(routed->level, scrub_driver_message(routed->text));
}
}  // namespace

void install_driver_log() { mongoc_log_set_handler(&handler, nullptr); }

}  // namespace dibs::mongo
