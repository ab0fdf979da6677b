#include "driver_log.hpp"

#include <mongoc/mongoc.h>

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
void handler(mongoc_log_level_t level, const char* domain, const char* message, void*) {
  auto routed = route_driver_message(static_cast<int>(level), domain ? domain : "", message ? message : "");
  if (routed && routed->level >= log::current_level()) log::write(routed->level, routed->text);
}
}  // namespace

void install_driver_log() { mongoc_log_set_handler(&handler, nullptr); }

}  // namespace dibs::mongo
