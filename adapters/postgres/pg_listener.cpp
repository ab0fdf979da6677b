#include "pg_listener.hpp"

#include "engine/src/close_on_exec.hpp"
#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

namespace dibs::pg {

pg_listener::pg_listener(connect_settings link, table_names names, std::string shown_uri)
    : link_(std::move(link)), names_(std::move(names)), shown_(std::move(shown_uri)) {}

std::unique_ptr<pg_connection> pg_listener::connect_and_listen() {
  auto conn = pg_connection::connect_blocking(link_);
  conn->exec_script_blocking(listen(names_));
  return conn;
}

bool pg_listener::start(std::function<void()> on_change) {
  if (running_) return true;
  std::unique_ptr<pg_connection> conn;
  try {
    conn = connect_and_listen();
  } catch (const std::exception& e) {
    log::warn(setting_name("follow"), ": can't LISTEN on ", notify_channel(names_), " (", e.what(), "); polling only");
    return false;
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    log::warn(setting_name("follow"), ": no eventfd for the listener; polling only");
    return false;
  }
  on_change_ = std::move(on_change);
  running_ = true;
  log::info(setting_name("follow"), ": listening on ", notify_channel(names_), " at ", shown_);
  thread_ = std::thread([this, c = std::move(conn)]() mutable { run(std::move(c)); });
  return true;
}

void pg_listener::stop() {
  if (!running_.exchange(false)) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  ::close(wake_fd_);
  wake_fd_ = -1;
}

bool pg_listener::pause(std::chrono::milliseconds d) {
  pollfd p{wake_fd_, POLLIN, 0};
  ::poll(&p, 1, static_cast<int>(d.count()));
  return running_;
}

void pg_listener::run(std::unique_ptr<pg_connection> conn) {
  auto backoff = std::chrono::milliseconds(100);
  bool told = false;  // the outage is said once, and its end once
  while (running_) {
    try {
      if (!conn) {
        conn = connect_and_listen();
        if (told) log::warn(setting_name("follow"), ": listening on ", notify_channel(names_), " again");
        told = false;
        backoff = std::chrono::milliseconds(100);
        on_change_();  // rows announced while the connection was gone
      }
      const auto channels = conn->await_notifications_blocking(std::chrono::milliseconds(1000), wake_fd_);
      if (!channels.empty()) {
        log::debug(setting_name("follow"), ": woken by NOTIFY on ", channels.front(), " (", channels.size(), ")");
        on_change_();
      }
    } catch (const std::exception& e) {
      conn.reset();
      if (!told) log::warn(setting_name("follow"), ": the LISTEN connection failed (", e.what(), "); polling until it is back");
      told = true;
      if (!pause(backoff)) break;
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    }
  }
}

}  // namespace dibs::pg
