#include "failure_filter_flags.hpp"

#include "file_mode_output.hpp"
#include "since_flag.hpp"

#include <dibs/log.hpp>

namespace dibs::cli {

void failure_filter_flags::add_to(CLI::App& cmd) {
  auto* contains = cmd.add_option("--reason", reason, "only failures whose reason contains this text")->type_name("TEXT");
  cmd.add_option("--reason-is", reason_is, "only failures whose reason is this text, as `dibs status` lists it")
      ->type_name("TEXT")
      ->excludes(contains);
  cmd.add_option("--since", since,
                 "only failures since then: a duration ago (30m, 2h) or an RFC 3339 time (2026-11-23T17:00:00Z); "
                 "MongoDB, MySQL, PostgreSQL")
      ->type_name("DURATION|TIME");
}

retry_filter failure_filter_flags::filter() const {
  retry_filter which;
  which.reason_contains = reason;
  which.reason_is = reason_is;
  if (!since.empty()) since_flag("--since", since, which);
  return which;
}

void failed_items_flags::add_to(CLI::App& cmd, const char* out_flag) {
  store.add_to(cmd, true, out_flag);
  filters.add_to(cmd);
}

std::shared_ptr<admin_store> failed_items_flags::open() {
  store.uri_to_connect();
  if (const auto note = find_file_mode_output(store); !note.empty()) log::warn(note);
  return store.open(false);
}

}  // namespace dibs::cli
