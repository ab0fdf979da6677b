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

awaitable<renew_result> timed_store::renew(std::vector<renewal> batch, millis lease) {
  co_return co_await inner_->renew(std::move(batch), lease);
}

awaitable<write_result> timed_store::release(std::vector<release_item> batch) {
  co_return co_await inner_->release(std::move(batch));
}

awaitable<write_result> timed_store::fail(std::vector<failure> batch) { co_return co_await inner_->fail(std::move(batch)); }

awaitable<store_stats> timed_store::stats() { co_return co_await inner_->stats(); }

}  // namespace dibs::cli
