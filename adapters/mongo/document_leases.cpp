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
  explicit document_leases(store_context& ctx) : ctx_(ctx) {}

  write_result complete(const std::vector<completion>& batch) override {
    write_result res;
    const auto parsed = parse_completions(batch, res);
    const auto& p = parsed.items;
    if (p.refs.empty()) return res;
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    const auto t = ctx_.clock.latest();  // live by any reading of the server's clock
    const auto writes = writes_for(p, [&](std::size_t k, const completion& item) {
      return fenced_update{completion_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token, t),
                           completion_update(f, parsed.result_of(batch, item))};
    });
    const auto out = bulk_update(coll.get(), writes, "writing completions");
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(p.refs, out, res.refused);
    for (auto& id : lost_documents(fenced_write::completion, coll.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }

  renew_result renew(const std::vector<renewal>& batch, millis lease) override {
    renew_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    const auto until = ctx_.clock.now() + lease;
    auto p = parse_batch(batch, res.lost);
    const auto writes = writes_for(p, [&](std::size_t k, const renewal&) {
      return fenced_update{fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token), renew_update(f, until)};
    });
    const auto out = bulk_update(coll.get(), writes, "renewing leases");
    const auto sent = settle_renewals(p.refs, out, until, res);
    for (auto& id : lost_documents(fenced_write::renewal, coll.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }

  write_result release(const std::vector<release_item>& batch) override {
    const auto t = ctx_.clock.now();
    // A refused release leaves the lease as it was: the item is claimable once it expires.
    return fenced_updates(batch, fenced_write::release, "releasing items", "release refused (claimable when the lease expires)",
                          [&](const release_item& item) {
                            return release_update(ctx_.names(), item.delay.count() <= 0, t + item.delay, item.why);
                          });
  }

  write_result fail(const std::vector<failure>& batch) override {
    const auto t = ctx_.clock.now();
    return fenced_updates(batch, fenced_write::failure, "recording failures", "failure record refused",
                          [&](const failure& item) {
                            return failure_update(ctx_.names(), item.reason, item.http_status, item.attempts, t);
                          });
  }

  store_stats stats() override { return document_lease_stats(ctx_); }
  void create_indexes() override { create_claim_index(ctx_); }

 private:
  // One bulk of `update(item)`s, each fenced by the item's lease (id + by + token): `doing` names
  // the write in errors; a statement the server refused is warned of as `refused_what`, and the
  // items whose lease did not hold are named lost.
  template <class Item, class Update>
  write_result fenced_updates(const std::vector<Item>& batch, fenced_write kind, const char* doing, const char* refused_what,
                              Update update) {
    write_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    auto p = parse_batch(batch, res.lost);
    const auto writes = writes_for(p, [&](std::size_t k, const Item& item) {
      return fenced_update{fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token), update(item)};
    });
    const auto out = bulk_update(coll.get(), writes, doing);
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(p.refs, out, res.refused);
    warn_each(res.refused, refused_what);
    for (auto& id : lost_documents(kind, coll.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }

  store_context& ctx_;
};

}  // namespace

std::unique_ptr<lease_keeper> document_lease_keeper(store_context& ctx) { return std::make_unique<document_leases>(ctx); }

}  // namespace dibs::mongo
