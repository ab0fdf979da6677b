// The `dibs` command line as a library: the subcommands (demo, enrich, seed, status, stub), the
// global flags (--log-level, --log-json), and how an error becomes a message and an exit code.
// The `dibs` executable is main.cpp around run(); tests link this library (dibs_cli) instead of
// compiling its sources.
#pragma once

namespace dibs::cli {

// Parses the arguments, runs the chosen subcommand and returns the process exit code: the
// command's own, 2 for a bad flag or an error (printed on stderr, as JSON with --log-json).
int run(int argc, char** argv);

}  // namespace dibs::cli
