// Which failed items a command acts on: `dibs retry` and `dibs failed` take the same filters
// (--reason, --reason-is, --since), spelled and explained once here.
#pragma once

#include <dibs/admin_store.hpp>

#include <CLI/CLI.hpp>

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

}  // namespace dibs::cli
