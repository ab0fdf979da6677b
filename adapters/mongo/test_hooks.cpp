#include "test_hooks.hpp"

#include "collection_ops.hpp"
#include "ids.hpp"
#include "store_impl.hpp"

#include <dibs/log.hpp>

namespace dibs::mongo {

struct test_access {
  static mongo_store::impl& of(mongo_store& s) { return *s.impl_; }
};

namespace {

std::vector<bson_ptr> by_id(store_context& ctx, const std::string& id_text) {
  auto id = id_from_text(id_text);
  if (!id) return {};
  const store_session db(ctx);
  auto filter = make_bson();
  bson_append_value(filter.get(), "_id", 3, &id->value());
  return find_docs(db.documents.get(), filter.get(), nullptr, "reading a document");
}

}  // namespace

void drop(mongo_store& s) {
  auto& impl = test_access::of(s);
  auto& ctx = impl.ctx;
  {
    auto c = ctx.conn.client();
    for (const auto& name : {ctx.opts.collection, ctx.lock_collection}) {
      auto coll = primary_collection(c.get(), ctx.opts.db, name);
      bson_error_t err;
      if (!mongoc_collection_drop(coll.get(), &err) && err.code != 26)  // 26: namespace not found
        log::debug("mongodb: dropping ", name, ": ", err.message);
    }
  }
  if (ctx.opts.create_indexes) impl.leases->create_indexes();
}

std::string document_json(mongo_store& s, const std::string& id) {
  auto docs = by_id(test_access::of(s).ctx, id);
  return docs.empty() ? "" : to_json(docs[0].get());
}

std::optional<std::string> target_json(mongo_store& s, const std::string& id) {
  auto& ctx = test_access::of(s).ctx;
  auto docs = by_id(ctx, id);
  if (docs.empty()) return std::nullopt;
  bson_iter_t it;
  if (!bson_iter_init_find(&it, docs[0].get(), ctx.names().target.c_str()) || !BSON_ITER_HOLDS_DOCUMENT(&it))
    return std::nullopt;
  uint32_t len;
  const uint8_t* data;
  bson_iter_document(&it, &len, &data);
  bson_t sub;
  bson_init_static(&sub, data, len);
  const bson_string text(bson_as_relaxed_extended_json(&sub, nullptr));
  return std::string(text ? text.get() : "");
}

std::vector<bson_ptr> documents(mongo_store& s) {
  auto& ctx = test_access::of(s).ctx;
  const store_session db(ctx);
  auto all = make_bson();
  return find_docs(db.documents.get(), all.get(), nullptr, "reading documents");
}

std::string run_command(mongo_store& s, const std::string& json_command) {
  auto& ctx = test_access::of(s).ctx;
  auto cmd = from_json(json_command);
  auto c = ctx.conn.client();
  driver_reply reply;
  bson_error_t err;
  const bool ok = mongoc_client_command_simple(c.get(), ctx.opts.db.c_str(), cmd.get(), nullptr, reply.out(), &err);
  std::string out = to_json(reply.get());
  if (!ok) throw mongo_error("command " + json_command, err);
  return out;
}

}  // namespace dibs::mongo
