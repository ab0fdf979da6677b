// The dibs program run as a user runs it, for the tests that drive the CLI: the binary this build
// made (DIBS_BIN in the environment names another), stdout and stderr as one text, and the exit
// code. Needs DIBS_BIN_PATH, which tests/CMakeLists.txt defines for every test program.
#pragma once

#include "process.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace dibs::test {

inline std::string dibs_binary() {
  const char* v = std::getenv("DIBS_BIN");
  return v && *v ? v : DIBS_BIN_PATH;
}

// What dibs reads on stdin: the test's own, or /dev/null (what a script or a cron job gives it,
// never a terminal: commands that ask for confirmation must then refuse).
enum class stdin_from { test, dev_null };

inline std::pair<int, std::string> run_dibs(std::vector<std::string> args, stdin_from in = stdin_from::test) {
  args.insert(args.begin(), dibs_binary());
  if (in == stdin_from::dev_null) args.insert(args.begin(), {"sh", "-c", "exec \"$0\" \"$@\" < /dev/null"});
  child_process p(args, /*merge_stderr=*/true);
  std::string out;
  const int rc = p.finish(out);
  return {rc, std::move(out)};
}

// run_dibs for a run that might never end (what a test guards against): sent `signal` after
// `bound` (coreutils' timeout; KILL ends it with status 137; another signal is followed by KILL
// 60 s later), so a hang fails the test instead of stalling it.
inline std::pair<int, std::string> run_dibs_within(std::chrono::seconds bound, std::vector<std::string> args,
                                                   const std::string& signal = "KILL") {
  args.insert(args.begin(), {"timeout", "--signal=" + signal, "--kill-after=60", std::to_string(bound.count()), dibs_binary()});
  child_process p(args, /*merge_stderr=*/true);
  std::string out;
  const int rc = p.finish(out);
  return {rc, std::move(out)};
}

// What a run printed (stdout and stderr together) and its exit code, by name.
struct ran {
  int rc;
  std::string out;
};
inline ran dibs_cli(std::vector<std::string> args) {
  auto [rc, out] = run_dibs(std::move(args));
  return {rc, std::move(out)};
}

inline int run_dibs(const std::vector<std::string>& args, std::string& out) {
  auto [rc, text] = run_dibs(args);
  out = std::move(text);
  return rc;
}

}  // namespace dibs::test
