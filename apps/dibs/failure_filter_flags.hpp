// Which failed items a command acts on: `dibs retry` and `dibs failed` take the same store and
// the same filters (--reason, --reason-is, --since), spelled and explained once here.
#pragma once

#include "store_flags.hpp"

#include <dibs/admin_store.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

namespace dibs::cli {

struct failure_filter_flags {
  std::string reason;
  std::optional<std::string> reason_is;
  std::string since;

  void add_to(CLI::App& cmd);
  // The filter the flags name; std::invalid_argument for a --since that is neither form.
  retry_filter filter() const;
};

// The store and the filters together.
struct failed_items_flags {
  store_flags store;
  failure_filter_flags filters;

  // `out_flag`: the store's file-mode output flag's name in this command.
  void add_to(CLI::App& cmd, const char* out_flag = "--out");
  // The store, opened to read and change its items, never its schema; a flag that can't apply
  // (--password-file on a file) is refused first, alone.
  std::shared_ptr<admin_store> open();
};

}  // namespace dibs::cli
