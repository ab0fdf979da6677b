// The lease as a lock document of the lock collection (lock-collection strategy). Renewals and
// releases are fenced updates of the lock (id + by + token). A completion or a failure can't be
// fenced by the lock in the same write (two collections): the locks are read first, the document
// is written for those still ours (a completion only while the lock is live by the server's
// clock) and only while it is open (open_document_filter: one final write per document, whoever
// writes it), then the locks are removed. Weaker than the document fence: see docs/guarantees.md.
#include "lease_keeper.hpp"

#include "collection_ops.hpp"
#include "fenced_batches.hpp"
#include "protocol.hpp"
#include "store_admin.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {

std::vector<lease_ref> pick(const std::vector<lease_ref>& refs, const std::vector<std::size_t>& which) {
  std::vector<lease_ref> out;
  for (auto k : which) out.push_back(refs[k]);
  return out;
}

class lock_leases final : public lease_keeper {
 public:
  using lease_keeper::lease_keeper;

  renew_result renew(const std::vector<renewal>& batch, millis lease) override {
    renew_result res;
    if (batch.empty()) return res;
    const store_session db(ctx_);
    const auto t = ctx_.clock.now();
    const auto until = t + lease;
    auto p = parse_batch(batch, res.lost);
    const auto writes = writes_for(p, [&](std::size_t k, const renewal&) {
      return fenced_update{lock_fenced_filter(p.ids[k].value(), p.refs[k].by, p.refs[k].token), lock_renew_update(t, until)};
    });
    const auto out = bulk_update(db.locks.get(), writes, "renewing leases");
    const auto sent = settle_renewals(p.refs, out, until, res);
    for (auto& id : lost_locks(fenced_write::renewal, db.locks.get(), sent, out.matched)) res.lost.push_back(id);
    return res;
  }

  write_result release(const std::vector<release_item>& batch) override {
    write_result res;
    if (batch.empty()) return res;
    const store_session db(ctx_);
    const auto t = ctx_.clock.now();
    auto p = parse_batch(batch, res.lost);
    const auto writes = writes_for(p, [&](std::size_t k, const release_item& item) {
      return fenced_update{lock_fenced_filter(p.ids[k].value(), p.refs[k].by, p.refs[k].token),
                           lock_release_update(item.delay.count() <= 0, t + item.delay, t, item.why, item.not_attempted)};
    });
    const auto out = bulk_update(db.locks.get(), writes, "releasing items");
    res.applied = static_cast<std::size_t>(out.matched);
    // A refused release leaves the lease as it was: the item is claimable once it expires.
    const auto sent = split_refused(p.refs, out, res.refused);
    warn_each(res.refused, "release refused (claimable when the lease expires)");
    for (auto& id : lost_locks(fenced_write::release, db.locks.get(), sent, out.matched)) res.lost.push_back(id);
    return res;
  }

  write_result fail(const std::vector<failure>& batch) override {
    write_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    const store_session db(ctx_);
    const auto t = ctx_.clock.now();
    auto p = parse_batch(batch, res.lost);
    const auto held = held_locks(p.refs, read_lock_states(db.locks.get(), p.refs), std::nullopt, res.lost);
    const auto writes = writes_for(p, held, [&](std::size_t k, const failure& item) {
      return fenced_update{open_document_filter(f, p.ids[k].value()),
                           failure_update(f, item.reason, item.http_status, item.attempts, t)};
    });
    const auto out = bulk_update(db.documents.get(), writes, "recording failures");
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(pick(p.refs, held), out, res.refused);
    warn_each(res.refused, "failure record refused");
    // A document already finished matched nothing: by another writer, or by this very failure
    // sent before, its answer lost on the way. Either way nothing was written now: lost.
    for (auto& id : lost_documents(fenced_write::failure, db.documents.get(), sent, out.matched, f)) res.lost.push_back(id);
    remove_locks(db.locks.get(), without_refused(p.refs, res.refused));  // a refused failure keeps its lock
    return res;
  }

  store_stats stats(bool with_ends) override { return lock_lease_stats(ctx_, with_ends); }
  void create_indexes() override { create_lock_indexes(ctx_); }

 private:
  // lease_keeper::complete's write.
  void write_completions(const std::vector<completion>& batch, const parsed_completions& parsed, const store_session& db,
                         write_result& res) override {
    const auto& p = parsed.items;
    const auto& f = ctx_.names();
    // Ours and live by any reading of the server's clock.
    const auto live = held_locks(p.refs, read_lock_states(db.locks.get(), p.refs), ctx_.clock.latest(), res.lost);
    const auto writes = writes_for(p, live, [&](std::size_t k, const completion& item) {
      return fenced_update{open_document_filter(f, p.ids[k].value()),
                           completion_update(f, parsed.result_of(batch, item))};
    });
    const auto out = bulk_update(db.documents.get(), writes, "writing completions");
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(pick(p.refs, live), out, res.refused);  // their locks stay: still ours
    for (auto& id : lost_documents(fenced_write::lock_completion, db.documents.get(), sent, out.matched, f)) res.lost.push_back(id);
    remove_locks(db.locks.get(), without_refused(p.refs, res.refused));
  }
};

}  // namespace

std::unique_ptr<lease_keeper> lock_lease_keeper(store_context& ctx) { return std::make_unique<lock_leases>(ctx); }

}  // namespace dibs::mongo
