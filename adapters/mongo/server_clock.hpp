// The MongoDB server's clock as this process sees it, for lease times.
//
// Leases are compared with the server's clock (`until >= now` in the completion's fence), so a
// worker must know the server's time. Adding a once-measured offset to this machine's wall clock
// would follow any step of that wall clock (NTP, an operator) until the next measurement: a step
// forward makes live leases look expired, and a worker may take them over while their holder
// still works on them. So the server's time is the server's localTime at the last measurement
// plus the steady (monotonic) time elapsed since, which no wall-clock step moves. Each new
// measurement replaces the estimate; when it differs from what the estimate predicted by more
// than a tolerance (the server's clock was stepped, or the estimate drifted), record() says so.
#pragma once

#include <dibs/job.hpp>

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>

namespace dibs::mongo {

class server_clock {
 public:
  using steady = std::chrono::steady_clock;
  using wall_fn = std::function<store_time()>;
  using steady_fn = std::function<steady::time_point()>;

  // `wall` is only used for offset() (a display value); the clocks are injectable for tests.
  explicit server_clock(std::chrono::milliseconds tolerance = std::chrono::milliseconds(1000),
                        wall_fn wall = [] { return store_clock::now(); },
                        steady_fn mono = [] { return steady::now(); });

  // A measurement: the server's localTime from a reply, and the steady instants just before the
  // request and just after the reply (the server read its clock somewhere in between; the middle
  // is taken). Returns how far the measurement is from what the previous one predicted when that
  // is more than the tolerance (plus half the round trip), else nullopt.
  std::optional<std::chrono::milliseconds> record(store_time server_local_time, steady::time_point before,
                                                  steady::time_point after);

  bool measured() const;
  // The server's time now: its localTime at the last measurement + the steady time since. Before
  // any measurement, this machine's wall clock.
  store_time now() const;
  // now() - this machine's wall clock: how far ahead the server is (logs and tests).
  std::chrono::milliseconds offset() const;
  // How far now() may be from the server's time: half the round trip of the measurement in use
  // (the server read its clock somewhere within it); zero before any measurement.
  std::chrono::milliseconds uncertainty() const;
  // The steady instant of the last measurement (when to measure again).
  steady::time_point measured_at() const;
  steady::time_point steady_now() const { return mono_(); }

 private:
  store_time estimate_at(steady::time_point t) const;  // caller holds mutex_

  std::chrono::milliseconds tolerance_;
  wall_fn wall_;
  steady_fn mono_;
  mutable std::mutex mutex_;
  bool measured_ = false;
  store_time server_at_{};
  steady::time_point steady_at_{};
  std::chrono::milliseconds uncertainty_{0};
};

}  // namespace dibs::mongo
