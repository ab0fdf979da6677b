#include "pending_sampler.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "store_context.hpp"

namespace dibs::mongo {

namespace {
// Up to `n` documents `filter` matches.
std::vector<bson_ptr> some(mongoc_collection_t* coll, const bson_ptr& filter, std::size_t n) {
  return find_docs(coll, filter.get(), find_opts(nullptr, static_cast<std::int64_t>(n)).get(), "reading pending documents");
}

// One document as a sample: its id, source and more fields, its names.
pending_sample sampled_document(const bson_t* doc, const field_names& f) {
  pending_sample s;
  if (auto id = doc_id(doc)) s.id = id_to_text(id->value());
  s.source = read_field(doc, f.source);
  for (const auto& m : f.more) s.more.push_back(read_field(doc, m));
  bson_iter_t it;
  if (bson_iter_init(&it, doc))
    while (bson_iter_next(&it)) s.fields.emplace_back(bson_iter_key(&it));
  return s;
}
}  // namespace

std::optional<pending_sample> sample_done_document(store_context& ctx) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  auto done = make_bson();
  bson_t target, source;
  BSON_APPEND_DOCUMENT_BEGIN(done.get(), f.target.c_str(), &target);
  BSON_APPEND_NULL(&target, "$ne");
  bson_append_document_end(done.get(), &target);
  BSON_APPEND_DOCUMENT_BEGIN(done.get(), f.source.c_str(), &source);
  BSON_APPEND_UTF8(&source, "$type", "string");
  bson_append_document_end(done.get(), &source);
  const auto docs = some(db.documents.get(), done, 1);
  if (docs.empty()) return std::nullopt;
  return sampled_document(docs.front().get(), f);
}

std::vector<pending_sample> sample_open_documents(store_context& ctx, std::size_t n) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  // Open documents whose source is a string first: one odd document among many must not make
  // the check refuse a template that fits the rest.
  auto usable = unlocked_candidate_filter(f);
  bson_t type;
  BSON_APPEND_DOCUMENT_BEGIN(usable.get(), f.source.c_str(), &type);
  BSON_APPEND_UTF8(&type, "$type", "string");
  bson_append_document_end(usable.get(), &type);
  auto docs = some(db.documents.get(), usable, n);
  if (docs.empty()) docs = some(db.documents.get(), unlocked_candidate_filter(f), n);
  std::vector<pending_sample> out;
  for (const auto& doc : docs) out.push_back(sampled_document(doc.get(), f));
  return out;
}

}  // namespace dibs::mongo
