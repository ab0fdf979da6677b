// dibs::cli::run: the command line's subcommands and global flags (cli_app.hpp).
#include "cli_app.hpp"
#include "commands.hpp"
#include "flag_names.hpp"

#include <dibs/log.hpp>
#include <dibs/log_escape.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace dibs::cli {

int run(int argc, char** argv) {
  CLI::App app{"dibs: claim documents, call an API for each, write the result back only while the claim holds"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--log-level) may come after the subcommand too
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")->capture_default_str();
  bool log_json = false;
  app.add_flag("--log-json", log_json, "log one JSON object per line (ts, level, msg; item, event, reason for item events)");

  std::vector<std::pair<CLI::App*, command>> commands;
  auto add = [&](command (*make)(CLI::App&)) {
    const auto before = app.get_subcommands({}).size();
    auto cmd = make(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(cmd));
  };
  add(&add_demo_command);
  add(&add_enrich_command);
  add(&add_seed_command);
  add(&add_status_command);
  add(&add_stub_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  dibs::log::level level;
  if (!dibs::log::parse_level(log_level, level)) {
    std::fprintf(stderr, "dibs: --log-level: '%s' is not one of debug, info, warn, error, off\n", log_level.c_str());
    return 2;
  }
  dibs::log::set_level(level);
  dibs::log::set_json(log_json);

  try {
    for (auto& [sub, body] : commands)
      if (sub->parsed()) return body();
  } catch (const std::exception& e) {
    // A library's bad setting is told with the flag the user typed.
    const auto* setting = dynamic_cast<const setting_error*>(&e);
    const std::string said = setting ? in_flag_words(*setting) : e.what();
    if (log_json)
      std::fprintf(stderr, "%s\n", dibs::log::json_line(dibs::log::level::error, said).c_str());
    else
      std::fprintf(stderr, "dibs: error: %s\n", dibs::log::escape_controls(said).c_str());
    return 2;
  }
  return 2;
}

}  // namespace dibs::cli
