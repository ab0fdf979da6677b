#include "pending_sampler.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "protocol.hpp"
#include "store_context.hpp"

namespace dibs::mongo {


std::optional<pending_sample> sample_open_document(store_context& ctx) {
  auto one = sample_open_documents(ctx, 1);
  return one.empty() ? std::nullopt : std::optional<pending_sample>(std::move(one.front()));
}

std::vector<pending_sample> sample_open_documents(store_context& ctx, std::size_t n) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  // Open documents whose source is a string first: one odd document among many must not
  // make the check refuse a template that fits the rest.
  auto usable = unlocked_candidate_filter(f);
  bson_t type;
  BSON_APPEND_DOCUMENT_BEGIN(usable.get(), f.source.c_str(), &type);
  BSON_APPEND_UTF8(&type, "$type", "string");
  bson_append_document_end(usable.get(), &type);
  const auto limit = static_cast<std::int64_t>(n);
  auto docs = find_docs(db.documents.get(), usable.get(), find_opts(nullptr, limit).get(), "reading pending documents");
  if (docs.empty())
    docs = find_docs(db.documents.get(), unlocked_candidate_filter(f).get(), find_opts(nullptr, limit).get(),
                     "reading pending documents");
  std::vector<pending_sample> out;
  for (const auto& doc : docs) out.push_back(sampled_document(doc.get(), f));
  return out;
}

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

}  // namespace dibs::mongo
