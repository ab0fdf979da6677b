#include "worker_leases.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "failed_documents.hpp"
#include "ids.hpp"
#include "protocol.hpp"
#include "store_admin.hpp"
#include "store_context.hpp"

#include <dibs/setting_error.hpp>
#include "engine/src/worker_id.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace dibs::mongo {

namespace {
void append_regex(bson_t* b, const std::string& path, const std::string& name) {
  bson_t r;
  BSON_APPEND_DOCUMENT_BEGIN(b, path.c_str(), &r);
  BSON_APPEND_UTF8(&r, "$regex", worker_by_regex(name).c_str());
  bson_append_document_end(b, &r);
}
void append_has(bson_t* b, const std::string& path) {
  bson_t e;
  BSON_APPEND_DOCUMENT_BEGIN(b, path.c_str(), &e);
  BSON_APPEND_BOOL(&e, "$exists", true);
  bson_append_document_end(b, &e);
}
// The open documents holding a lease in the document: stats() counts them as leased.
bson_ptr leased_documents(const field_names& f) {
  auto b = make_bson();
  BSON_APPEND_NULL(b.get(), f.target.c_str());
  bson_t no;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), f.lock_failed().c_str(), &no);
  BSON_APPEND_BOOL(&no, "$exists", false);
  bson_append_document_end(b.get(), &no);
  append_has(b.get(), f.lock_token());
  return b;
}
std::optional<std::int64_t> read_date_ms(const bson_t* doc, const std::string& path) {
  bson_iter_t it, child;
  if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, path.c_str(), &child) &&
      BSON_ITER_HOLDS_DATE_TIME(&child))
    return bson_iter_date_time(&child);
  return std::nullopt;
}
bson_ptr projection(const std::vector<std::string>& paths) {
  auto b = make_bson();
  for (const auto& p : paths) BSON_APPEND_INT32(b.get(), p.c_str(), 1);
  return b;
}

struct tally {
  std::map<std::string, lease_holder> by;
  void add(const std::string& who, std::optional<std::int64_t> until_ms, std::int64_t now_ms) {
    auto& h = by[who];
    h.by = who;
    const double in_s = until_ms ? static_cast<double>(*until_ms - now_ms) / 1000.0 : 0;
    h.earliest_until_s = h.leased == 0 ? in_s : std::min(h.earliest_until_s, in_s);
    h.latest_until_s = h.leased == 0 ? in_s : std::max(h.latest_until_s, in_s);
    ++h.leased;
    if (until_ms && *until_ms < now_ms) ++h.expired;
  }
  std::vector<lease_holder> take() {
    std::vector<lease_holder> out;
    for (auto& [k, v] : by) out.push_back(std::move(v));
    return out;
  }
};
}  // namespace

std::string worker_by_regex(const std::string& name) { return "^" + regex_literal(name) + "(-[0-9]+)?$"; }

bson_ptr worker_document_filter(const field_names& f, const std::string& name) {
  auto b = leased_documents(f);
  append_regex(b.get(), f.lock_by(), name);
  return b;
}

bson_ptr worker_lock_filter(const std::string& name) {
  auto b = make_bson();
  append_has(b.get(), "token");
  append_regex(b.get(), "by", name);
  return b;
}

std::vector<lease_holder> lease_holders_blocking(store_context& ctx, bool lock_collection) {
  const auto& f = ctx.names();
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.clock.now().time_since_epoch()).count();
  const store_session db(ctx);
  tally t;
  if (!lock_collection) {
    const auto docs = find_docs(db.documents.get(), leased_documents(f).get(),
                                find_opts(projection({f.lock_by(), f.lock_until()}).get(), 0).get(), "reading the leases");
    for (const auto& d : docs) t.add(read_str(d.get(), f.lock_by()), read_date_ms(d.get(), f.lock_until()), now_ms);
    return t.take();
  }
  // Locks of open documents only, as lock_lease_stats counts them (a lock may outlive its document's end).
  auto any_lock = make_bson();
  append_has(any_lock.get(), "token");
  const auto held = find_docs(db.locks.get(), any_lock.get(), find_opts(projection({"_id", "by", "until"}).get(), 0).get(),
                              "reading the locks");
  if (held.empty()) return {};
  const auto filter = open_documents_of(held, f);
  std::set<std::string> open;
  for (const auto& d : find_docs(db.documents.get(), filter.get(), find_opts(id_projection().get(), 0).get(), "reading the documents")) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, d.get(), "_id")) open.insert(id_to_text(*bson_iter_value(&it)));
  }
  for (const auto& d : held) {
    bson_iter_t it;
    if (!bson_iter_init_find(&it, d.get(), "_id") || !open.count(id_to_text(*bson_iter_value(&it)))) continue;
    t.add(read_str(d.get(), "by"), read_date_ms(d.get(), "until"), now_ms);
  }
  return t.take();
}

std::uint64_t release_worker_blocking(store_context& ctx, bool lock_collection, const std::string& name) {
  require_worker_id(name);
  const store_session db(ctx);
  bson_error_t err;
  driver_reply reply;
  const std::string why = "released by an operator (dibs release " + setting_name("worker") + " " + name + ")";
  if (lock_collection) {
    if (!mongoc_collection_update_many(db.locks.get(), worker_lock_filter(name).get(),
                                       lock_release_update(true, {}, ctx.clock.now(), why).get(), nullptr, reply.out(), &err))
      throw mongo_error("releasing the worker's locks", err);
  } else {
    if (!mongoc_collection_update_many(db.documents.get(), worker_document_filter(ctx.names(), name).get(),
                                       release_update(ctx.names(), true, {}, why).get(), nullptr, reply.out(), &err))
      throw mongo_error("releasing the worker's leases", err);
  }
  return static_cast<std::uint64_t>(reply_int(reply.get(), "modifiedCount"));
}

}  // namespace dibs::mongo
