// The MongoDB driver's own messages, routed through dibs's logger. Left alone, mongoc prints its
// warnings straight to stderr in its own format ("2026/11/23 08:42:52.0786: [ 3562]: WARNING:
// mongoc: ..."), which breaks JSON logs (every stderr line one JSON object) and ignores the
// log level. Seen on a machine without a writable /dev/shm: "Falling back to malloc for
// counters" on every run.
#pragma once

#include <dibs/log.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace dibs::mongo {

struct driver_message {
  log::level level;
  std::string text;  // "mongoc (DOMAIN): MESSAGE"
};

// What dibs logs for one driver message (mongoc's level as its integer value), or nothing.
// Errors and criticals stay errors, warnings stay warnings, except the driver's notes about its
// own performance counters, which cost the user nothing and are debug; the rest is debug.
std::optional<driver_message> route_driver_message(int mongoc_level, std::string_view domain,
                                                   std::string_view message);

// The connection strings whose secrets no driver message may show: each connection guards its
// own before the driver sees it. scrub_driver_message withholds a message that quotes a piece of
// one (uri_redact.hpp: redact_driver_message); the log handler and mongo_error both pass theirs
// through it.
void guard_driver_secrets(const std::string& uri);
std::string scrub_driver_message(const std::string& message);

// Installs the handler; called once, before mongoc_init() (which may already log).
void install_driver_log();

}  // namespace dibs::mongo
