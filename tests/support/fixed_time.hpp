// A fixed moment on the store's clock (November 2023), for the pure decisions tested without a
// server: leases and deadlines are written relative to it.
#pragma once

#include <dibs/job.hpp>

#include <chrono>

namespace dibs::test {

inline const store_time t0 = store_time{} + std::chrono::milliseconds(1'700'000'000'000);

}  // namespace dibs::test
