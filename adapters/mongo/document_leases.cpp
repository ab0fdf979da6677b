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
    if (batch.empty()) return res;
    const auto docs = results_as_bson(batch, res.refused);
    auto converted = [&](const completion& x) { return docs[static_cast<std::size_t>(&x - batch.data())] != nullptr; };
    const auto& f = ctx_.names();
    auto p = parse_batch(batch, res.lost, converted);
    if (p.refs.empty()) return res;
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    const auto t = ctx_.clock.latest();  // live by any reading of the server's clock
    std::vector<fenced_update> writes;
    for (std::size_t k = 0; k < p.refs.size(); ++k)
      writes.push_back({completion_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token, t),
                        completion_update(f, docs[static_cast<std::size_t>(p.items[k] - batch.data())].get())});
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
    std::vector<fenced_update> writes;
    for (std::size_t k = 0; k < p.refs.size(); ++k)
      writes.push_back({fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token), renew_update(f, until)});
    const auto out = bulk_update(coll.get(), writes, "renewing leases");
    res.applied = static_cast<std::size_t>(out.matched);
    // A renewal the server refused did not extend the lease: to the engine, the lease is lost.
    refusals refused;
    const auto sent = split_refused(p.refs, out, refused);
    warn_each(refused, "renewal refused (the lease will expire)");
    for (auto& r : refused) res.lost.push_back(r.first);
    for (auto& id : lost_documents(fenced_write::renewal, coll.get(), sent, out.matched, f)) res.lost.push_back(id);
    for (std::size_t i = 0; i < res.applied; ++i) res.until.push_back(until);
    return res;
  }

  write_result release(const std::vector<release_item>& batch) override {
    write_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    const auto t = ctx_.clock.now();
    auto p = parse_batch(batch, res.lost);
    std::vector<fenced_update> writes;
    for (std::size_t k = 0; k < p.refs.size(); ++k) {
      const auto& item = *p.items[k];
      writes.push_back({fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token),
                        release_update(f, item.delay.count() <= 0, t + item.delay, item.why)});
    }
    const auto out = bulk_update(coll.get(), writes, "releasing items");
    res.applied = static_cast<std::size_t>(out.matched);
    // A refused release leaves the lease as it was: the item is claimable once it expires.
    const auto sent = split_refused(p.refs, out, res.refused);
    warn_each(res.refused, "release refused (claimable when the lease expires)");
    for (auto& id : lost_documents(fenced_write::release, coll.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }

  write_result fail(const std::vector<failure>& batch) override {
    write_result res;
    if (batch.empty()) return res;
    const auto& f = ctx_.names();
    auto c = ctx_.conn.client();
    auto coll = ctx_.documents(c.get());
    const auto t = ctx_.clock.now();
    auto p = parse_batch(batch, res.lost);
    std::vector<fenced_update> writes;
    for (std::size_t k = 0; k < p.refs.size(); ++k) {
      const auto& item = *p.items[k];
      writes.push_back({fenced_filter(f, p.ids[k].value(), p.refs[k].by, p.refs[k].token),
                        failure_update(f, item.reason, item.http_status, item.attempts, t)});
    }
    const auto out = bulk_update(coll.get(), writes, "recording failures");
    res.applied = static_cast<std::size_t>(out.matched);
    const auto sent = split_refused(p.refs, out, res.refused);
    warn_each(res.refused, "failure record refused");
    for (auto& id : lost_documents(fenced_write::failure, coll.get(), sent, out.matched, f)) res.lost.push_back(id);
    return res;
  }

  store_stats stats() override { return document_lease_stats(ctx_); }
  void create_indexes() override { create_claim_index(ctx_); }

 private:
  store_context& ctx_;
};

}  // namespace

std::unique_ptr<lease_keeper> document_lease_keeper(store_context& ctx) { return std::make_unique<document_leases>(ctx); }

}  // namespace dibs::mongo
