// A command that cleans up after itself (dibs bench) takes SIGINT/SIGTERM on a thread of its own:
// its main thread, blocked in a store call or reading a worker's pipe, must never see the signal
// as EINTR (that once ended a bench with "a worker process did not start" instead of dropping the
// scratch), and the worker processes it starts must still die of a signal as usual.
#include "apps/dibs/bench_workers.hpp"
#include "apps/dibs/signal_watch.hpp"

#include <catch2/catch.hpp>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <thread>

using dibs::cli::signal_watch;
using dibs::cli::worker_process;

namespace {
bool blocked_here(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}
}  // namespace

TEST_CASE("while a signal watch lives, only its own thread takes SIGINT and SIGTERM", "[cli][signals]") {
  REQUIRE_FALSE(blocked_here(SIGTERM));
  {
    signal_watch watch;
    CHECK(blocked_here(SIGTERM));
    CHECK(blocked_here(SIGINT));
    bool in_new_thread = false;
    std::thread([&] { in_new_thread = blocked_here(SIGTERM); }).join();
    CHECK(in_new_thread);  // threads the command starts (an engine's) inherit it
  }
  CHECK_FALSE(blocked_here(SIGTERM));
}

TEST_CASE("a SIGTERM does not cut short a blocking read of the command's thread", "[cli][signals]") {
  signal_watch watch;
  int p[2];
  REQUIRE(::pipe(p) == 0);
  watch.on_signal([&](int) { (void)!::write(p[1], "s", 1); });
  std::thread sender([] { ::kill(::getpid(), SIGTERM); });
  char c = 0;
  const auto n = ::read(p[0], &c, 1);
  const int err = errno;
  sender.join();
  INFO("read: " << n << " errno " << err);
  CHECK(n == 1);
  CHECK(watch.caught() == SIGTERM);
  ::close(p[0]);
  ::close(p[1]);
}

// Run as a worker by the next test: prints whether SIGTERM is blocked in it.
TEST_CASE("[child] print the signal mask", "[.signal-mask-child]") {
  std::printf("%s\n", blocked_here(SIGTERM) ? "blocked" : "open");
  std::fflush(stdout);
}

TEST_CASE("a worker process started under a signal watch takes signals as usual", "[cli][signals]") {
  signal_watch watch;
  worker_process child({"[.signal-mask-child]"});
  std::string line;
  do line = child.read_line();  // past Catch's own "Filters:" line
  while (!line.empty() && line != "open" && line != "blocked");
  CHECK(line == "open");
  CHECK(child.wait() == 0);
}
