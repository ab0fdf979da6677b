#include "server_clock.hpp"

namespace dibs::mongo {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

server_clock::server_clock(milliseconds tolerance, wall_fn wall, steady_fn mono)
    : tolerance_(tolerance), wall_(std::move(wall)), mono_(std::move(mono)) {}

store_time server_clock::estimate_at(steady::time_point t) const {
  return server_at_ + duration_cast<store_clock::duration>(t - steady_at_);
}

std::optional<milliseconds> server_clock::record(store_time server_local_time, steady::time_point before,
                                                 steady::time_point after) {
  const auto mid = before + (after - before) / 2;
  std::lock_guard lock(mutex_);
  std::optional<milliseconds> jump;
  if (measured_) {
    const auto predicted = estimate_at(mid);
    const auto off = duration_cast<milliseconds>(server_local_time - predicted);
    const auto allowed = tolerance_ + duration_cast<milliseconds>(after - before) / 2;
    if (off > allowed || off < -allowed) jump = off;
  }
  measured_ = true;
  server_at_ = server_local_time;
  steady_at_ = mid;
  // Rounded up, and a millisecond for the server's own rounding: a bound, never an underestimate.
  uncertainty_ = std::chrono::ceil<milliseconds>(after - before) / 2 + milliseconds(1);
  return jump;
}

bool server_clock::measured() const {
  std::lock_guard lock(mutex_);
  return measured_;
}

store_time server_clock::now() const {
  const auto t = mono_();
  std::lock_guard lock(mutex_);
  return measured_ ? estimate_at(t) : wall_();
}

milliseconds server_clock::offset() const { return duration_cast<milliseconds>(now() - wall_()); }

milliseconds server_clock::uncertainty() const {
  std::lock_guard lock(mutex_);
  return uncertainty_;
}

server_clock::steady::time_point server_clock::measured_at() const {
  std::lock_guard lock(mutex_);
  return steady_at_;
}

}  // namespace dibs::mongo
