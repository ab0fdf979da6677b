// A shard's completer: the outcomes of its items wait here (outcome_buffers.hpp) until the
// flusher, a coroutine on the shard's thread, writes them as fenced batches (completer.cpp says
// how). It shares the shard's book of held leases, which it updates as writes land, and the
// shard's phase; what a store's denial means for the run is the shard's to say (`denied`).
#pragma once

#include "async_event.hpp"
#include "gate.hpp"
#include "held_leases.hpp"
#include "item_tracer.hpp"
#include "outcome_buffers.hpp"
#include "shard_context.hpp"

#include <dibs/net.hpp>
#include <dibs/store.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dibs {

class completer {
 public:
  using steady = std::chrono::steady_clock;

  // `dispatcher_wake` is told after every flush (the dispatcher may wait for its outcomes to
  // land); `denied` is called when the store denies a write (the run ends).
  completer(shard_context& ctx, held_leases& held, const shard_phase& phase, async_event& dispatcher_wake,
            std::function<void(const std::string&)> denied, std::size_t index);

  // An item's outcome, to be written.
  void add(completion c) { added(outcomes_.done, std::move(c)); }
  void add(release_item r) { added(outcomes_.releases, std::move(r)); }
  void add(failure f) { added(outcomes_.failures, std::move(f)); }

  // Outcomes waiting to be written (the dispatcher claims nothing while too many do).
  std::size_t unwritten() const { return outcomes_.size(); }
  // Outcomes waiting, or a write of them under way.
  bool busy() const { return outcomes_.size() > 0 || flushing_; }
  // Look at the buffers now (the shard finishes, or waits for its outcomes to land): what waits
  // is written unless the store's failure backoff holds the flusher back.
  void wake() { flusher_wake_.notify(); }
  // Whether the shard's items still run (their outcomes to come): what waits, waits longer for
  // them (outcome_buffers.hpp: linger_while). Unset: the configured linger always.
  void items_running_by(std::function<bool()> running) { items_running_ = std::move(running); }
  // The run traces: each item's trace ends as its write lands (item_tracer.hpp).
  void trace_with(item_tracer* tracer) { tracer_ = tracer; }

  // Runs until the shard finishes with nothing left to write (or given up on).
  awaitable<void> flusher(gate::holder running);

 private:
  template <class Item>
  void added(std::vector<Item>& buffer, Item item) {
    buffer.push_back(std::move(item));
    buffered_one();
  }
  void buffered_one();
  awaitable<bool> flush_once();
  bool stopping() const { return phase_ != shard_phase::running; }
  bool finishing() const { return phase_ == shard_phase::finishing; }
  void forget(const std::string& id, std::uint64_t token);
  // The store refused to write an item's answer: fail the item with the store's reason.
  void answer_refused(const lease_ref& ref, const std::string& why);
  // How many of `batch` were written with the API's "no data" answer (held_lease::no_data).
  std::uint64_t no_data_landed(const std::vector<completion>& batch, const write_result& r) const;
  // The store refused an item's failure record: try a shorter reason once, then let it go.
  void failure_refused(const failure& f, const std::string& why);
  // After a denied write of releases or failures: they are dropped, what they held left to its
  // leases' expiry (a denied completion becomes a release instead: flush_once).
  template <class Item>
  void leave_to_expiry(std::vector<Item>& items, const char* what);
  static constexpr std::size_t short_reason_bytes = 200;

  shard_context& ctx_;
  held_leases& held_;
  const shard_phase& phase_;
  async_event& dispatcher_wake_;
  std::function<void(const std::string&)> denied_;
  std::size_t index_;
  outcome_buffers outcomes_;
  async_event flusher_wake_;  // the first outcome, a full flush, an outcome while stopping, or wake()
  bool flushing_ = false;
  std::function<bool()> items_running_;
  int final_flush_failures_ = 0;
  item_tracer* tracer_ = nullptr;
  traced_write write_;  // the write under way, for its items' traces
  // The write under way is `operation`: from now on, forget() ends an item's trace with it.
  void writing(const char* operation);
};

}  // namespace dibs
