#include "pending_sampler.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {
// The first document `filter` matches, or nothing.
bson_ptr first(mongoc_collection_t* coll, const bson_ptr& filter) {
  auto docs = find_docs(coll, filter.get(), find_opts(nullptr, 1).get(), "reading a pending document");
  return docs.empty() ? bson_ptr{} : std::move(docs.front());
}
}  // namespace

std::optional<pending_sample> sample_open_document(store_context& ctx) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  // An open document whose source is a string first: one odd document among many must not
  // make the check refuse a template that fits the rest.
  auto usable = unlocked_candidate_filter(f);
  bson_t type;
  BSON_APPEND_DOCUMENT_BEGIN(usable.get(), f.source.c_str(), &type);
  BSON_APPEND_UTF8(&type, "$type", "string");
  bson_append_document_end(usable.get(), &type);
  auto doc = first(db.documents.get(), usable);
  if (!doc) doc = first(db.documents.get(), unlocked_candidate_filter(f));
  if (!doc) return std::nullopt;

  pending_sample s;
  if (auto id = doc_id(doc.get())) s.id = id_to_text(id->value());
  s.source = read_field(doc.get(), f.source);
  for (const auto& m : f.more) s.more.push_back(read_field(doc.get(), m));
  bson_iter_t it;
  if (bson_iter_init(&it, doc.get()))
    while (bson_iter_next(&it)) s.fields.emplace_back(bson_iter_key(&it));
  return s;
}

}  // namespace dibs::mongo
