// The claim-protocol suite that every store must pass (the protocol in the README). A backend provides
// a harness; the same checks then run against memory, MongoDB, MariaDB and PostgreSQL alike, and a
// case a backend can't have (a refusing row, deleting completions) is skipped for it alone.
#pragma once

#include <dibs/store.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs::test {

class store_harness {
 public:
  virtual ~store_harness() = default;
  // A client of the backing data; two calls give two independent clients of the same data.
  virtual std::shared_ptr<store> open() = 0;
  // Adds `n` pending items whose source is a string; returns their ids.
  virtual std::vector<std::string> seed(std::size_t n) = 0;
  // Makes the store's clock advance by `d` (a manual clock, or real time for a server).
  virtual void let_time_pass(std::chrono::milliseconds d) = 0;
  // The stored target of `id` as JSON text, or nullopt while it is null.
  virtual std::optional<std::string> target_of(const std::string& id) = 0;
  // The slack every timed check keeps on each side (leases are 3 margins, the grace 2): at least
  // a second where time really passes, so a loaded machine's scheduling can't decide a check.
  virtual std::chrono::milliseconds margin() const { return std::chrono::milliseconds(1000); }
  // Whether the store's claims honour claim_request::max_attempts (an item claimed that many
  // times already is failed, not leased). Every store should; a store that does not yet says so.
  virtual bool honours_max_attempts() const { return true; }
  // Makes the store refuse every write of item `id` that completes it (the answer, or the delete
  // with --on-done delete) for what it carries -- a constraint or a trigger of the user's -- and
  // nothing else of it (its failure can be recorded). False when the backend has no such thing:
  // the cases that need it are then skipped.
  virtual bool refuse_completion_of(const std::string& /*id*/) { return false; }
  // A client that deletes what it completes (--on-done delete); nullptr when the store can't.
  virtual std::shared_ptr<store> open_deleting() { return nullptr; }
};

// Registers nothing by itself: call from a TEST_CASE with a harness; uses Catch2 SECTIONs.
void run_store_suite(store_harness& h);

}  // namespace dibs::test
