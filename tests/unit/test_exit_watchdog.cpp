// After a stop signal the process ends by its deadline even when something holds it after the
// run (a store call that never returns): the watchdog's thread ends it with the signal's code.
#include "apps/dibs/exit_watchdog.hpp"

#include "support/eventually.hpp"
#include "support/process.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

using namespace std::chrono_literals;

// Run as a child by the next test: armed, then held forever (as by a store call that never
// returns); a later, later deadline does not move the earlier one.
TEST_CASE("[child] held after a signal", "[.exit-watchdog-child]") {
  dibs::cli::exit_by(std::chrono::steady_clock::now() + 200ms, 143, "held: exiting now");
  dibs::cli::exit_by(std::chrono::steady_clock::now() + std::chrono::hours(1), 130, "not this one");
  std::mutex m;
  std::condition_variable never;
  std::unique_lock lock(m);
  never.wait(lock, [] { return false; });
}

TEST_CASE("a process held after a signal ends at the watchdog's deadline with the signal's code", "[cli][signals]") {
  char self[4096];
  const auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  const auto started = std::chrono::steady_clock::now();
  dibs::test::child_process child({std::string(self, static_cast<std::size_t>(n)), "[.exit-watchdog-child]"}, true);
  // Held forever but for the watchdog: a broken one fails here, not at ctest's timeout.
  REQUIRE(dibs::test::eventually([&] { return !child.running(); }, 30s));
  CHECK(std::chrono::steady_clock::now() - started >= 200ms);  // not before its deadline
  std::string out;
  CHECK(child.finish(out) == 143);
  CHECK(out.find("held: exiting now") != std::string::npos);
  CHECK(out.find("not this one") == std::string::npos);
}
