// SIGINT and SIGTERM caught for the whole of a command that must clean up after itself
// (`dibs bench` drops its scratch table): a thread of its own waits for them, so a signal that
// comes while the command seeds or drops (no engine running) is kept too, not fatal. A signal
// also arms the exit watchdog (exit_watchdog.hpp): the command has 30 s to clean up (5 s after a
// second signal), then the process ends with 128 + the first signal.
#pragma once

#include <functional>
#include <memory>

namespace dibs::cli {

class signal_watch {
 public:
  signal_watch();
  ~signal_watch();
  signal_watch(const signal_watch&) = delete;
  signal_watch& operator=(const signal_watch&) = delete;

  // What to do on a signal (stop the engine now, pass it on to worker processes); called on the
  // watcher's thread, and at once if a signal has already come. Replaces the one before.
  void on_signal(std::function<void(int)> act);
  // The first signal caught, else 0.
  int caught() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace dibs::cli
