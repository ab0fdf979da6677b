// The `dibs` subcommands. Each registers its flags on the CLI11 app and returns the function
// that runs it (returning the process exit code).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace dibs::cli {

using command = std::function<int()>;

command add_demo_command(CLI::App& app);
command add_stub_command(CLI::App& app);
command add_enrich_command(CLI::App& app);
command add_seed_command(CLI::App& app);
command add_status_command(CLI::App& app);
command add_retry_command(CLI::App& app);
command add_failed_command(CLI::App& app);
command add_release_command(CLI::App& app);
command add_init_command(CLI::App& app);
command add_bench_command(CLI::App& app);

}  // namespace dibs::cli
