// A store that times what `dibs bench` reports: each claim, and each write of outcomes (complete),
// from the engine's call to the store's answer (so a blocking store's wait for a pool thread is
// in it, as the engine feels it). Everything else is handed on untouched.
#pragma once

#include "bench_figures.hpp"

#include <adapters/stores/forwarding_store.hpp>

#include <dibs/admin_store.hpp>

#include <memory>

namespace dibs::cli {

class timed_store final : public forwarding_store<store> {
 public:
  explicit timed_store(std::shared_ptr<admin_store> inner) : inner_(std::move(inner)) {}

  awaitable<std::vector<job>> claim(claim_request req) override;
  awaitable<write_result> complete(std::vector<completion> batch) override;

  const latency_record& claims() const { return claims_; }
  const latency_record& writes() const { return writes_; }

 private:
  store& inner() const override { return *inner_; }
  std::shared_ptr<admin_store> inner_;
  latency_record claims_, writes_;
};

}  // namespace dibs::cli
