#include "signal_watch.hpp"

#include "exit_watchdog.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>

namespace dibs::cli {

struct signal_watch::impl {
  boost::asio::io_context ioc{1};
  boost::asio::signal_set signals{ioc, SIGINT, SIGTERM};
  std::mutex mutex;
  std::function<void(int)> act;
  std::atomic<int> first{0};
  std::thread thread;
  sigset_t watched;
  sigset_t before;  // the creating thread's mask, put back at the end

  void await() {
    signals.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      int none = 0;
      const bool is_first = first.compare_exchange_strong(none, sig);
      // Whatever the command then waits on (a store that stopped answering), the process ends:
      // 30 s after the first signal, 5 s after another.
      exit_by(std::chrono::steady_clock::now() + (is_first ? std::chrono::seconds(30) : std::chrono::seconds(5)),
              128 + first.load(), "signal " + std::to_string(sig) + ": the command did not end in time; exiting now");
      {
        std::lock_guard lock(mutex);
        if (act) act(sig);
      }
      await();
    });
  }
};

// The signals are blocked in the creating thread (and so in every thread it starts from now on)
// and taken by the watcher's thread alone: a blocking call elsewhere (a store's read, a worker's
// pipe) is never cut short with EINTR before the watcher has even recorded the signal.
signal_watch::signal_watch() : impl_(std::make_unique<impl>()) {
  sigemptyset(&impl_->watched);
  sigaddset(&impl_->watched, SIGINT);
  sigaddset(&impl_->watched, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &impl_->watched, &impl_->before);
  impl_->await();
  impl_->thread = std::thread([this] {
    // One that came in between is pending, and is taken here.
    pthread_sigmask(SIG_UNBLOCK, &impl_->watched, nullptr);
    impl_->ioc.run();
  });
}

signal_watch::~signal_watch() {
  boost::asio::post(impl_->ioc, [this] { impl_->signals.cancel(); });
  impl_->thread.join();
  pthread_sigmask(SIG_SETMASK, &impl_->before, nullptr);
}

void signal_watch::on_signal(std::function<void(int)> act) {
  std::lock_guard lock(impl_->mutex);
  impl_->act = std::move(act);
  if (const int sig = impl_->first.load(); sig && impl_->act) impl_->act(sig);
}

int signal_watch::caught() const { return impl_->first.load(); }

}  // namespace dibs::cli
