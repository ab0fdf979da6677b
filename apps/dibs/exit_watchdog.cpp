#include "exit_watchdog.hpp"

#include <dibs/log.hpp>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace dibs::cli {

namespace {
struct watchdog {
  std::mutex mutex;
  std::condition_variable changed;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int code = 0;
  std::string why;
  bool started = false;

  void run() {
    std::unique_lock lock(mutex);
    while (std::chrono::steady_clock::now() < deadline) changed.wait_until(lock, deadline);
    log::error(why);
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
};
// Never destroyed: the thread may still wait on it while the process's static objects go.
watchdog& the_watchdog() {
  static auto* w = new watchdog;
  return *w;
}
}  // namespace

void exit_by(std::chrono::steady_clock::time_point deadline, int code, std::string why) {
  auto& w = the_watchdog();
  std::lock_guard lock(w.mutex);
  if (deadline < w.deadline) {
    w.deadline = deadline;
    w.code = code;
    w.why = std::move(why);
  }
  if (!w.started) {
    w.started = true;
    std::thread([&w] { w.run(); }).detach();
  }
  w.changed.notify_all();
}

}  // namespace dibs::cli
