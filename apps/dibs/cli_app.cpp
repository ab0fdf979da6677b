// dibs::cli::run: the command line's subcommands and global flags (cli_app.hpp).
#include "cli_app.hpp"
#include "commands.hpp"
#include "did_you_mean.hpp"
#include "exit_codes.hpp"
#include "flag_names.hpp"

#include <dibs/log.hpp>
#include "engine/src/log_escape.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace dibs::cli {

namespace {
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--log-json") == 0) return true;
  return false;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> flag_names_of(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* opt : app.get_options())
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
  return names;
}

// What went wrong in the user's words, with the name they probably meant: a word that is not a
// command, a flag the command does not have, else the parser's own message.
std::string usage_message(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  const CLI::App* sub = nullptr;
  for (const auto* s : app.get_subcommands({}))
    if (s->parsed()) sub = s;
  if (!sub) {
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      if (word.empty() || word[0] == '-') continue;
      std::string said = "'" + word + "' is not a dibs command";
      if (const auto near = nearest_name(word, command_names(app))) said += "; did you mean '" + *near + "'?";
      std::string all;
      for (const auto& n : command_names(app)) all += (all.empty() ? "" : ", ") + n;
      return said + " (commands: " + all + ")";
    }
    std::string all;
    for (const auto& n : command_names(app)) all += (all.empty() ? "" : ", ") + n;
    return "a command is required: one of " + all;
  }
  // Unknown flags fall through to the top level (global flags may follow the command).
  auto extras = sub->remaining();
  for (const auto& x : app.remaining()) extras.push_back(x);
  for (const auto& extra : extras) {
    if (extra.size() < 2 || extra[0] != '-') continue;
    const std::string flag = extra.substr(0, extra.find('='));
    std::string said = "dibs " + sub->get_name() + " has no flag " + flag;
    auto known = flag_names_of(*sub);
    for (const auto& g : flag_names_of(app)) known.push_back(g);
    if (const auto near = nearest_name(flag, known)) said += "; did you mean " + *near + "?";
    return said;
  }
  return std::string(e.what());
}

int usage_error(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  const std::string said = usage_message(app, argc, argv, e);
  if (wants_json(argc, argv)) {
    std::fprintf(stderr, "%s\n", dibs::log::json_line(dibs::log::level::error, said).c_str());
  } else {
    std::fprintf(stderr, "dibs: error: %s\n", dibs::log::escape_controls(said).c_str());
    std::fprintf(stderr, "Run 'dibs --help' or 'dibs <command> --help' for the flags.\n");
  }
  return 2;
}
}  // namespace

int run(int argc, char** argv) {
  // The library names its settings in messages ("rate_scope"); this program's users know flags.
  dibs::name_settings_with(&flag_for);
  CLI::App app{"dibs: claim documents, call an API for each, write the result back only while the claim holds", "dibs"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--log-level) may come after the subcommand too
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")->type_name("LEVEL")->capture_default_str();
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
  add(&add_retry_command);
  add(&add_failed_command);
  add(&add_release_command);
  add(&add_init_command);
  add(&add_stub_command);
  add(&add_bench_command);

  app.set_version_flag("--version", std::string("dibs ") + DIBS_VERSION);
  app.footer(
      "Run 'dibs <command> --help' for its flags.\n"
      "Exit codes: 0 nothing failed; 1 some items failed; 2 usage or start-up error; 3 work left\n"
      "pending with no signal to explain it; 4 a call budget spent (--max-calls, --budget); 5 the\n"
      "API said the account can make no more calls; 130/143 stopped by SIGINT/SIGTERM.");
  if (argc < 2) {
    // Bare `dibs`, as bare `git`: what it can do, on stderr, and the usage status.
    std::fprintf(stderr, "%s", app.help().c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return usage_error(app, argc, argv, e);
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
  } catch (const account_spent_error& e) {  // its own exit status: no run goes without a fix
    if (log_json)
      std::fprintf(stderr, "%s\n", dibs::log::json_line(dibs::log::level::error, e.what()).c_str());
    else
      std::fprintf(stderr, "dibs: error: %s\n", dibs::log::escape_controls(e.what()).c_str());
    return exit_code::account_spent;
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
