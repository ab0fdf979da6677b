// A request rate the engine can change while it runs (`POST /rate`, engine::set_rate): the
// processor's limiter implements it (include/dibs/http/rate_limiter.hpp), the engine only holds it.
// Thread-safe.
#pragma once

namespace dibs {

class rate_control {
 public:
  virtual ~rate_control() = default;
  // Requests per second for the whole process; <= 0: no limit.
  virtual void set_per_second(double per_second) = 0;
  virtual double per_second() const = 0;
};

}  // namespace dibs
