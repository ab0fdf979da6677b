// `dibs init`: makes the table (MongoDB: the collection and its indexes) that --store names ready
// for dibs, so that `dibs enrich` and `dibs status`, which create nothing, can use it. A missing
// table is created when --new-table says it is new (else refused, with the name probably meant);
// an existing one gets the columns and the claim index dibs lacks (the user's rows and columns
// untouched; a --target column that is not there only with --new-target), and the columns an
// earlier dibs made under plain names renamed. It records the settings it was given
// (dibs/recorded_settings.hpp) with the table, so that later commands need only --store. Running
// it again changes nothing, unless it is given other settings: those are recorded instead, and
// what dibs derived from the old ones (the claim column or index) is moved to them.
#include "commands.hpp"
#include "answer_flags.hpp"
#include "store_flags.hpp"

#include <dibs/field_mapping.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace dibs::cli {

command add_init_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "init", "Create the table or collection --store names, or add the columns and index dibs needs to your own; "
              "record --source and --target with it for the commands that follow");
  auto f = std::make_shared<store_flags>();
  f->add_to(*sub, true);
  // Flags of the commands that run or read, not of one that prepares a table.
  for (const char* name : {"--out", "--id-field", "--db-threads"}) sub->remove_option(sub->get_option(name));
  sub->add_flag("--new-table,--new-collection", f->new_table,
                "the table (MongoDB: collection) --store names is new: create it; without it a missing one is refused, "
                "with the name you probably meant, as a misspelled name would start an empty table");
  auto map = std::make_shared<std::vector<std::string>>();
  sub->add_option("--map", *map,
                  "the answer's members (JSON Pointers) that enrich writes into columns of their own, each with its SQL "
                  "type: 'country=/country:VARCHAR(64),lat=/loc/lat:DOUBLE PRECISION'; a column the table lacks is "
                  "added, and the mapping recorded, so enrich needs no --map (a column that exists needs no type)")
      ->type_name("NAME=/POINTER[:TYPE],...")
      ->allow_extra_args(false);
  sub->footer(
      "Examples:\n"
      "  MYSQL_PWD=... dibs init --store 'mysql://app@127.0.0.1:3306/shop?table=visits' --source ip --target geo --new-target\n"
      "  dibs init --store 'postgresql://app@127.0.0.1:5432/shop?table=jobs' --new-table --on-done delete\n"
      "  dibs init --store 'mongodb://127.0.0.1:27017/app?collection=messages' --target location\n"
      "  dibs init --store 'postgresql://app@127.0.0.1:5432/shop?table=places' --map 'country=/country:TEXT,lat=/lat:DOUBLE PRECISION'\n"
      "Then `dibs enrich`, `status`, `retry` and `release` need only --store (and enrich --url): they use what\n"
      "init recorded (in dibs_settings, beside your table); a flag that contradicts it is refused.\n"
      "A JSON Lines file needs no init.");
  return [f, map, sub] {
    if (f->file_mode()) throw std::invalid_argument("--store jsonl:...: a JSON Lines file needs no dibs init");
    answer_flags given;
    given.map = *map;
    f->mapped_fields = given.answer_map().names();  // checks each pointer, as enrich would
    f->map = given.map_text();
    f->map_given = sub->count("--map") > 0;
    auto st = f->open(true, store_flags::table_use::prepare);
    const auto mapped = f->map.empty() ? std::string() : " --map " + recorded_mapping(f->map);
    std::printf("init: %s: ready; recorded --source %s --target %s%s (dibs enrich, status, retry and release use them)\n",
                st->describe().c_str(), f->source.c_str(), f->target.c_str(), mapped.c_str());
    return 0;
  };
}

}  // namespace dibs::cli
