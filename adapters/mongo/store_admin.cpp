#include "store_admin.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "stats_counts.hpp"
#include "store_context.hpp"

#include <dibs/ipapi/ipv4_ranges.hpp>
#include <dibs/setting_error.hpp>
#include <profiles/ipapi/skewed_draw.hpp>
#include <dibs/missing_table_error.hpp>

#include <algorithm>
#include <random>

namespace dibs::mongo {

namespace {

void append_path(bson_t* doc, const std::string& path, const std::string& value) {
  const auto dot = path.find('.');
  if (dot == std::string::npos) {
    BSON_APPEND_UTF8(doc, path.c_str(), value.c_str());
    return;
  }
  bson_t child;
  const std::string head = path.substr(0, dot);
  BSON_APPEND_DOCUMENT_BEGIN(doc, head.c_str(), &child);
  append_path(&child, path.substr(dot + 1), value);
  bson_append_document_end(doc, &child);
}

std::uint64_t count(mongoc_collection_t* coll, const bson_ptr& filter) {
  return static_cast<std::uint64_t>(count_docs(coll, filter.get()));
}

}  // namespace

void create_claim_index(store_context& ctx) {
  auto c = ctx.conn.client();
  run_optional_command(c.get(), ctx.opts.db, claim_index_command(ctx.opts.collection, ctx.names()).get(),
                       "creating the claim index");
}

void create_lock_indexes(store_context& ctx) {
  auto c = ctx.conn.client();
  run_optional_command(c.get(), ctx.opts.db, lock_index_command(ctx.lock_collection, 3600).get(),
                       "creating the lock collection's indexes");
}

void require_collection(store_context& ctx, const std::string& advice) {
  auto c = ctx.conn.client();
  database_ptr db(mongoc_client_get_database(c.get(), ctx.opts.db.c_str()));
  bson_error_t err;
  char** names = mongoc_database_get_collection_names_with_opts(db.get(), nullptr, &err);
  if (!names) throw mongo_error("listing the collections of " + ctx.opts.db, err);
  std::vector<std::string> existing;
  for (char** n = names; *n; ++n) existing.emplace_back(*n);
  bson_strfreev(names);
  if (std::find(existing.begin(), existing.end(), ctx.opts.collection) != existing.end()) return;
  // The lock collections beside it are dibs's, not a name the user meant.
  existing.erase(std::remove_if(existing.begin(), existing.end(),
                                [](const std::string& n) { return n.size() > 5 && n.ends_with(".lock"); }),
                 existing.end());
  throw missing_table_error("collection", ctx.opts.collection, "database " + ctx.opts.db, std::move(existing), advice);
}

void require_target_field(store_context& ctx, const std::string& init_command) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  const auto has_target = has_field_filter(f.target);
  if (!find_docs(db.documents.get(), has_target.get(), find_opts(id_projection().get(), 1).get(), "looking for the target field")
           .empty())
    return;
  const auto any = find_docs(db.documents.get(), make_bson().get(), find_opts(nullptr, 1).get(), "reading a document");
  if (any.empty()) return;  // an empty collection: nothing is pending, nothing to tell
  // The user's names (the lease field is dibs's), and of those the ones that could hold answers
  // (an object, or null: pending): the "did you mean" picks among these, as a forgotten target setting
  // (the default, location) is rarely a typo of the field meant.
  std::vector<std::string> names, answer_like;
  bson_iter_t it;
  if (bson_iter_init(&it, any.front().get()))
    while (bson_iter_next(&it)) {
      const std::string key = bson_iter_key(&it);
      if (key == "_id" || key == f.lock) continue;
      names.push_back(key);
      const auto type = bson_iter_type(&it);
      if (key != f.source && (type == BSON_TYPE_DOCUMENT || type == BSON_TYPE_NULL)) answer_like.push_back(key);
    }
  std::string listed;
  for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
  throw missing_table_error("field", f.target, "collection " + ctx.opts.db + "." + ctx.opts.collection,
                            std::move(answer_like),
                            "a document has: " + listed + ". A field that is new: " + setting_name("new_target") +
                                (init_command.empty() ? std::string() : ", or record it once with " + init_command + " " + setting_name("new_target")));
}

std::uint64_t count_foreign_leases(store_context& ctx) {
  const store_session db(ctx);
  return count(db.documents.get(), foreign_lease_filter(ctx.names()));
}

std::uint64_t count_open_documents(store_context& ctx) {
  const store_session db(ctx);
  return count(db.documents.get(), unlocked_candidate_filter(ctx.names()));
}

std::uint64_t count_no_data(store_context& ctx) {
  const store_session db(ctx);
  return count(db.documents.get(), no_data_filter(ctx.names()));
}

std::size_t seed_documents(store_context& ctx, std::size_t n, std::uint64_t seed, std::size_t distinct) {
  const store_session db(ctx);
  ipv4_draw draw(n, distinct, seed);
  std::size_t inserted = 0;
  const std::size_t chunk = 1000;
  while (inserted < n) {
    const std::size_t k = std::min(chunk, n - inserted);
    std::vector<bson_ptr> docs;
    std::vector<const bson_t*> ptrs;
    for (std::size_t i = 0; i < k; ++i) {
      auto d = make_bson();
      bson_oid_t oid;
      bson_oid_init(&oid, nullptr);
      BSON_APPEND_OID(d.get(), "_id", &oid);
      append_path(d.get(), ctx.names().source, ipv4_to_string(draw.next()));
      BSON_APPEND_NULL(d.get(), ctx.names().target.c_str());
      ptrs.push_back(d.get());
      docs.push_back(std::move(d));
    }
    driver_reply reply;
    bson_error_t err;
    const bool ok = mongoc_collection_insert_many(db.documents.get(), ptrs.data(), ptrs.size(), nullptr, reply.out(), &err);
    inserted += static_cast<std::size_t>(reply_int(reply.get(), "insertedCount"));
    if (!ok) throw mongo_error("seeding documents", err);
  }
  return inserted;
}

store_stats document_lease_stats(store_context& ctx, bool with_ends) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  const auto t = ctx.clock.now();
  return stats_from_counts(with_ends, [&](doc_count what) -> std::uint64_t {
    switch (what) {
      case doc_count::done: return count(db.documents.get(), done_filter(f));
      case doc_count::failed: return count(db.documents.get(), failed_filter(f));
      case doc_count::leased_live: return count(db.documents.get(), leased_filter(f, t, true));
      case doc_count::leased_expired: return count(db.documents.get(), leased_filter(f, t, false));
      case doc_count::open: return count(db.documents.get(), unlocked_candidate_filter(f));
    }
    return 0;
  });
}

bson_ptr open_documents_of(const std::vector<bson_ptr>& locks, const field_names& f) {
  std::vector<bson_value_t> ids;  // views into `locks`, which outlives them
  for (const auto& d : locks) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, d.get(), "_id")) ids.push_back(*bson_iter_value(&it));
  }
  auto filter = unlocked_candidate_filter(f);
  append_id_in(filter.get(), ids);
  return filter;
}

store_stats lock_lease_stats(store_context& ctx, bool with_ends) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  const auto t = ctx.clock.now();
  store_stats s;
  if (with_ends) {
    s.done = count(db.documents.get(), done_filter(f));
    s.failed = count(db.documents.get(), failed_filter(f));
  }
  // A lock can outlive its document's end: a holder killed between writing the document and
  // removing its lock leaves it to the TTL index (about an hour). Counted as a lease, it kept
  // every worker waiting for a finished document, so only locks of open documents count.
  auto open_locked = [&](bool live) {
    const auto held = find_docs(db.locks.get(), lock_leased_filter(t, live).get(), find_opts(id_projection().get(), 0).get(),
                                "reading the locks");
    if (held.empty()) return std::uint64_t{0};
    return count(db.documents.get(), open_documents_of(held, f));
  };
  s.leased_live = open_locked(true);
  s.leased_expired = open_locked(false);
  const auto open = count_docs(db.documents.get(), unlocked_candidate_filter(f).get());
  s.pending = static_cast<std::uint64_t>(
      std::max<std::int64_t>(0, open - static_cast<std::int64_t>(s.leased_live + s.leased_expired)));
  return s;
}

}  // namespace dibs::mongo
