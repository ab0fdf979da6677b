// A memory store as an admin_store (what the CLI's stores are), for tests of the controls and of
// the operator's release without a database.
#pragma once

#include <dibs/stores/memory_store.hpp>

#include <dibs/admin_store.hpp>

#include <atomic>

namespace dibs::test {

// A memory store behind `Base`'s interface (store, admin_store) that counts its stats() calls: a
// full-table count on a real store.
template <class Base>
class counted_memory : public Base {
 public:
  std::atomic<int> stats_calls{0};

  awaitable<std::vector<job>> claim(claim_request r) override { return inner_.claim(std::move(r)); }
  awaitable<write_result> complete(std::vector<completion> b) override { return inner_.complete(std::move(b)); }
  awaitable<renew_result> renew(std::vector<renewal> b, millis l) override { return inner_.renew(std::move(b), l); }
  awaitable<write_result> release(std::vector<release_item> b) override { return inner_.release(std::move(b)); }
  awaitable<write_result> fail(std::vector<failure> b) override { return inner_.fail(std::move(b)); }
  awaitable<store_stats> stats() override {
    ++stats_calls;
    return inner_.stats();
  }
  memory_store& inner() { return inner_; }

 protected:
  memory_store inner_;
};

class memory_admin final : public counted_memory<admin_store> {
 public:
  std::atomic<int> holders_calls{0};

  std::string describe() const override { return "memory (admin)"; }
  std::size_t seed(std::size_t n, std::uint64_t seed) override {
    inner_.seed_random_ips(n, seed);
    return n;
  }
  store_stats stats_blocking() override { return inner_.stats_now(); }
  std::vector<lease_holder> lease_holders() override {
    ++holders_calls;
    return inner_.lease_holders_now();
  }
  std::uint64_t release_worker(const std::string& name) override { return inner_.release_worker_now(name); }
  std::uint64_t retry_failed(const retry_filter& which) override { return inner_.retry_failed_now(which); }
  void list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) override {
    for (const auto& f : inner_.failed_now(which)) each(f);
  }
};

}  // namespace dibs::test
