// The lease in the document's lock field (update-find, find-and-modify, batch): every write is a
// fenced update of the document itself (id + by + token; a completion also until >= now).
#include "lease_keeper.hpp"

#include "collection_ops.hpp"
#include "fenced_batches.hpp"
#include "protocol.hpp"
#include "store_admin.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {

class document_leases final : public lease_keeper {
 public:
  using lease_keeper::lease_keeper;

  renew_result renew(const std::vector<renewal>& batch, millis lease) override {
    renew_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    const store_session db(ctx_);
    const auto until = ctx_.clock.now() + lease;
    auto p = parse_batch(batch, res.lost);
    const auto writes = writes_for(p, [&](std::size_t k, const renewal&) {
      return fenced_update{fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token), renew_update(f, until)};
    });
    const auto out = bulk_update(db.documents.get(), writes, "renewing leases");
    const auto sent = settle_renewals(p.refs, out, until, res);
    for (auto& id : lost_documents(fenced_write::renewal, db.documents.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }

  write_result release(const std::vector<release_item>& batch) override {
    const auto t = ctx_.clock.now();
    // A refused release leaves the lease as it was: the item is claimable once it expires.
    return fenced_updates(batch, fenced_write::release, "releasing items", "release refused (claimable when the lease expires)",
                          [&](const release_item& item) {
                            return release_update(ctx_.names(), item.delay.count() <= 0, t + item.delay, item.why, item.not_attempted);
                          });
  }

  write_result fail(const std::vector<failure>& batch) override {
    const auto t = ctx_.clock.now();
    return fenced_updates(batch, fenced_write::failure, "recording failures", "failure record refused",
                          [&](const failure& item) {
                            return failure_update(ctx_.names(), item.reason, item.http_status, item.attempts, t);
                          });
  }

  store_stats stats(bool with_ends) override { return document_lease_stats(ctx_, with_ends); }
  void create_indexes() override { create_claim_index(ctx_); }

 private:
  // lease_keeper::complete's write.
  void write_completions(const std::vector<completion>& batch, const parsed_completions& parsed, const store_session& db,
                         write_result& res) override {
    const auto& p = parsed.items;
    const auto& f = ctx_.names();
    const auto t = ctx_.clock.latest();  // live by any reading of the server's clock
    const auto writes = writes_for(p, [&](std::size_t k, const completion& item) {
      return fenced_update{completion_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token, t),
                           completion_update(f, parsed.result_of(batch, item))};
    });
    const auto out = bulk_update(db.documents.get(), writes, "writing completions");
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(p.refs, out, res.refused);
    for (auto& id : lost_documents(fenced_write::completion, db.documents.get(), sent, out.matched, f)) res.lost.push_back(id);
  }

  // One bulk of `update(item)`s, each fenced by the item's lease (id + by + token): `doing` names
  // the write in errors; a statement the server refused is warned of as `refused_what`, and the
  // items whose lease did not hold are named lost.
  template <class Item, class Update>
  write_result fenced_updates(const std::vector<Item>& batch, fenced_write kind, const char* doing, const char* refused_what,
                              Update update) {
    write_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    const store_session db(ctx_);
    auto p = parse_batch(batch, res.lost);
    const auto writes = writes_for(p, [&](std::size_t k, const Item& item) {
      return fenced_update{fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token), update(item)};
    });
    const auto out = bulk_update(db.documents.get(), writes, doing);
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(p.refs, out, res.refused);
    warn_each(res.refused, refused_what);
    for (auto& id : lost_documents(kind, db.documents.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }
};

}  // namespace

std::unique_ptr<lease_keeper> document_lease_keeper(store_context& ctx) { return std::make_unique<document_leases>(ctx); }

}  // namespace dibs::mongo
