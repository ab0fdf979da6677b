// A store that hands every call to another one: the base of a store that wraps one and changes
// only a few of its calls (dibs bench's timed_store times claims and completions; store jsonl:-
// is the file mode on a private directory). `Base` is store or admin_store; the wrapper names
// the store it wraps by overriding inner(). Header-only: no library to link.
#pragma once

#include <dibs/store.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

template <class Base = store>
class forwarding_store : public Base {
 public:
  awaitable<std::vector<job>> claim(claim_request req) override { return inner().claim(std::move(req)); }
  awaitable<write_result> complete(std::vector<completion> batch) override { return inner().complete(std::move(batch)); }
  awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) override {
    return inner().renew(std::move(batch), lease);
  }
  awaitable<write_result> release(std::vector<release_item> batch) override { return inner().release(std::move(batch)); }
  awaitable<write_result> fail(std::vector<failure> batch) override { return inner().fail(std::move(batch)); }
  awaitable<store_stats> stats() override { return inner().stats(); }
  awaitable<store_stats> open_stats() override { return inner().open_stats(); }
  awaitable<std::optional<std::uint64_t>> open_count() override { return inner().open_count(); }
  std::string describe() const override { return inner().describe(); }
  void let_go(const std::vector<lease_ref>& items) override { inner().let_go(items); }
  std::uint64_t claim_conflicts() const override { return inner().claim_conflicts(); }

 protected:
  // The wrapped store; it outlives every call handed to it.
  virtual store& inner() const = 0;
};

}  // namespace dibs
