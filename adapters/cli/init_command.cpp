// `dibs init`: makes the table (MongoDB: the collection and its indexes) that --store names ready
// for dibs, so that `dibs enrich` and `dibs status`, which create nothing, can use it. A missing
// table is created; an existing one gets the columns and the claim index dibs lacks (the user's
// rows and columns untouched). Running it again changes nothing.
#include "commands.hpp"
#include "store_flags.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace dibs::cli {

command add_init_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "init", "Create the table or collection --store names, or add the columns and index dibs needs to your own");
  auto f = std::make_shared<store_flags>();
  f->add_to(*sub, true);
  return [f] {
    if (f->file_mode()) throw std::invalid_argument("--store jsonl:...: a JSON Lines file needs no dibs init");
    auto st = f->open(true, store_flags::table_use::prepare);
    std::printf("init: %s: ready\n", st->describe().c_str());
    return 0;
  };
}

}  // namespace dibs::cli
