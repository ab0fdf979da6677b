// Where the lease lives after a claim, and the fenced writes that end or extend it. Chosen once at
// construction, with the claim strategy:
//
//   document_leases.cpp   the lease is the document's lock field {by, token, until, attempts}
//                         (update-find, find-and-modify, batch); every write is fenced by
//                         id + by + token, a completion also by until >= the server's now
//   lock_leases.cpp       lock-collection: the lease is a lock document of the lock collection;
//                         a write first checks the locks, then writes the open document, then
//                         removes the lock
//
// Each write is one unordered bulk (one round trip per batch); items whose write the server
// refused come back as `refused`, items whose fence did not hold as `lost`.
#pragma once

#include <dibs/store.hpp>

#include <memory>
#include <vector>

namespace dibs::mongo {

struct store_context;
struct store_session;
struct parsed_completions;

class lease_keeper {
 public:
  explicit lease_keeper(store_context& ctx) : ctx_(ctx) {}
  virtual ~lease_keeper() = default;
  // Parses the batch (parse_completions: a result BSON can't hold is refused, an id that does not
  // parse is lost) and, when any item is left, writes those (write_completions).
  write_result complete(const std::vector<completion>& batch);
  virtual renew_result renew(const std::vector<renewal>& batch, millis lease) = 0;
  virtual write_result release(const std::vector<release_item>& batch) = 0;
  virtual write_result fail(const std::vector<failure>& batch) = 0;
  // `with_ends`: done and failed counted too (else left 0: store::open_stats).
  virtual store_stats stats(bool with_ends = true) = 0;
  // The indexes this lease model's queries need (a failure is logged, not thrown).
  virtual void create_indexes() = 0;

 protected:
  // The completions of `batch` that parsed (at least one), written on `db`; `res` already holds
  // what parsing refused or lost.
  virtual void write_completions(const std::vector<completion>& batch, const parsed_completions& parsed,
                                 const store_session& db, write_result& res) = 0;

  store_context& ctx_;
};

std::unique_ptr<lease_keeper> document_lease_keeper(store_context& ctx);
std::unique_ptr<lease_keeper> lock_lease_keeper(store_context& ctx);

}  // namespace dibs::mongo
