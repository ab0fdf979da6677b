// dibs: claim -> fetch -> verified update, from the command line.
#include "commands.hpp"

#include <dibs/log.hpp>
#include <dibs/log_escape.hpp>

#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <vector>

namespace {
// A core dump of dibs holds what it had in memory: the database password, the API key, the
// answers. Off unless asked for, to debug a crash: DIBS_CORE_DUMPS=1.
void no_core_dumps_unless_asked() {
  const char* asked = std::getenv("DIBS_CORE_DUMPS");
  if (asked && std::string_view(asked) == "1") return;
  rlimit core{};
  if (::getrlimit(RLIMIT_CORE, &core) != 0) core.rlim_max = 0;
  core.rlim_cur = 0;
  ::setrlimit(RLIMIT_CORE, &core);
}
}  // namespace

int main(int argc, char** argv) {
  no_core_dumps_unless_asked();
  // Past the file size limit (ulimit -f), a write fails with EFBIG, which file mode handles like
  // a full disk (the journal cut back to whole records, the outcomes kept and written later),
  // instead of the signal killing dibs halfway through a record.
  std::signal(SIGXFSZ, SIG_IGN);

  CLI::App app{"dibs: claim documents, call an API for each, write the result back only while the claim holds"};
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--log-level) may come after the subcommand too
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")->capture_default_str();
  bool log_json = false;
  app.add_flag("--log-json", log_json, "log one JSON object per line (ts, level, msg; item, event, reason for item events)");

  std::vector<std::pair<CLI::App*, dibs::cli::command>> commands;
  auto add = [&](dibs::cli::command (*make)(CLI::App&)) {
    const auto before = app.get_subcommands({}).size();
    auto cmd = make(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(cmd));
  };
  add(&dibs::cli::add_demo_command);
  add(&dibs::cli::add_enrich_command);
  add(&dibs::cli::add_seed_command);
  add(&dibs::cli::add_status_command);
  add(&dibs::cli::add_stub_command);

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
    for (auto& [sub, run] : commands)
      if (sub->parsed()) return run();
  } catch (const std::exception& e) {
    if (log_json)
      std::fprintf(stderr, "%s\n", dibs::log::json_line(dibs::log::level::error, e.what()).c_str());
    else
      std::fprintf(stderr, "dibs: error: %s\n", dibs::log::escape_controls(e.what()).c_str());
    return 2;
  }
  return 2;
}
