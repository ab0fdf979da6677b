// A store that times what `dibs bench` reports: each claim, and each write of outcomes (complete),
// from the engine's call to the store's answer (so a blocking store's wait for a pool thread is
// in it, as the engine feels it). Everything else is handed on untouched.
#pragma once

#include "bench_figures.hpp"

#include <dibs/admin_store.hpp>

#include <memory>

namespace dibs::cli {

class timed_store final : public store {
 public:
  explicit timed_store(std::shared_ptr<admin_store> inner) : inner_(std::move(inner)) {}

  awaitable<std::vector<job>> claim(claim_request req) override;
  awaitable<write_result> complete(std::vector<completion> batch) override;
  awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) override;
  awaitable<write_result> release(std::vector<release_item> batch) override;
  awaitable<write_result> fail(std::vector<failure> batch) override;
  awaitable<store_stats> stats() override;
  std::string describe() const override { return inner_->describe(); }
  std::uint64_t claim_conflicts() const override { return inner_->claim_conflicts(); }

  const latency_record& claims() const { return claims_; }
  const latency_record& writes() const { return writes_; }

 private:
  std::shared_ptr<admin_store> inner_;
  latency_record claims_, writes_;
};

}  // namespace dibs::cli
