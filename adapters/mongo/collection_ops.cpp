#include "collection_ops.hpp"

#include "driver_handles.hpp"
#include "ids.hpp"
#include "protocol.hpp"

#include <dibs/log.hpp>

namespace dibs::mongo {

bson_ptr find_opts(const bson_t* projection, std::int64_t limit, const char* sort_key, int sort_dir) {
  auto o = make_bson();
  if (projection) BSON_APPEND_DOCUMENT(o.get(), "projection", projection);
  if (limit > 0) BSON_APPEND_INT64(o.get(), "limit", limit);
  if (sort_key) {
    bson_t sort;
    BSON_APPEND_DOCUMENT_BEGIN(o.get(), "sort", &sort);
    BSON_APPEND_INT32(&sort, sort_key, sort_dir);
    bson_append_document_end(o.get(), &sort);
  }
  return o;
}

bson_ptr has_field_filter(const std::string& path) {
  auto f = make_bson();
  bson_t exists;
  BSON_APPEND_DOCUMENT_BEGIN(f.get(), path.c_str(), &exists);
  BSON_APPEND_BOOL(&exists, "$exists", true);
  bson_append_document_end(f.get(), &exists);
  return f;
}

bson_ptr id_projection() {
  auto p = make_bson();
  BSON_APPEND_INT32(p.get(), "_id", 1);
  return p;
}

bson_ptr unordered_opts() {
  auto o = make_bson();
  BSON_APPEND_BOOL(o.get(), "ordered", false);
  return o;
}

std::vector<bson_ptr> find_docs(mongoc_collection_t* coll, const bson_t* filter, const bson_t* opts,
                                const std::string& what) {
  std::vector<bson_ptr> out;
  cursor_ptr cur(mongoc_collection_find_with_opts(coll, filter, opts, nullptr));
  const bson_t* doc;
  while (mongoc_cursor_next(cur.get(), &doc)) out.emplace_back(bson_copy(doc));
  bson_error_t err;
  if (mongoc_cursor_error(cur.get(), &err)) throw mongo_error(what, err);
  return out;
}

std::int64_t count_docs(mongoc_collection_t* coll, const bson_t* filter) {
  bson_error_t err;
  const auto n = mongoc_collection_count_documents(coll, filter, nullptr, nullptr, nullptr, &err);
  if (n < 0) throw mongo_error("counting documents", err);
  return n;
}

bulk_verdict bulk_update(mongoc_collection_t* coll, const std::vector<fenced_update>& statements,
                         const std::string& what, const bson_t* statement_opts) {
  if (statements.empty()) return {};
  bulk_ptr bulk(mongoc_collection_create_bulk_operation_with_opts(coll, unordered_opts().get()));
  bson_error_t err{};
  for (const auto& s : statements)
    if (!mongoc_bulk_operation_update_one_with_opts(bulk.get(), s.filter.get(), s.update.get(), statement_opts, &err))
      throw mongo_error(what + " (building the bulk write)", err);
  driver_reply reply;
  const uint32_t hint = mongoc_bulk_operation_execute(bulk.get(), reply.out(), &err);
  auto v = judge_bulk_reply(reply.get(), hint != 0, hint != 0 ? "" : driver_error_text(err));
  if (v.batch_error) throw mongo_error(what + ": " + *v.batch_error);
  return v;
}

void remove_locks(mongoc_collection_t* locks, const std::vector<lease_ref>& refs) {
  if (refs.empty()) return;
  bulk_ptr bulk(mongoc_collection_create_bulk_operation_with_opts(locks, unordered_opts().get()));
  bson_error_t err;
  for (const auto& r : refs) {
    auto id = id_from_text(r.id);
    if (!id) continue;
    mongoc_bulk_operation_remove_one_with_opts(bulk.get(), lock_fenced_filter(id->value(), r.by, r.token).get(), nullptr,
                                               &err);
  }
  driver_reply reply;
  if (!mongoc_bulk_operation_execute(bulk.get(), reply.out(), &err))
    log::warn("mongodb: removing locks failed (their TTL will remove them): ", driver_error_text(err));
}

void run_optional_command(mongoc_client_t* client, const std::string& db, const bson_t* cmd, const std::string& what) {
  driver_reply reply;
  bson_error_t err;
  if (!mongoc_client_command_simple(client, db.c_str(), cmd, nullptr, reply.out(), &err))
    log::warn("mongodb: ", what, " failed (continuing without it): ", driver_error_text(err));
}

}  // namespace dibs::mongo
