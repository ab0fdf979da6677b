#include "timed_store.hpp"

#include <chrono>

namespace dibs::cli {

namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

awaitable<std::vector<job>> timed_store::claim(claim_request req) {
  const auto t0 = std::chrono::steady_clock::now();
  auto jobs = co_await inner_->claim(std::move(req));
  claims_.record(since(t0));
  co_return jobs;
}

awaitable<write_result> timed_store::complete(std::vector<completion> batch) {
  const auto t0 = std::chrono::steady_clock::now();
  auto result = co_await inner_->complete(std::move(batch));
  writes_.record(since(t0));
  co_return result;
}

}  // namespace dibs::cli
