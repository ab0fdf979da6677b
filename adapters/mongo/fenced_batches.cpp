#include "fenced_batches.hpp"

#include "collection_ops.hpp"
#include "json_to_bson.hpp"
#include "protocol.hpp"

#include <dibs/log.hpp>

#include <simdjson.h>

namespace dibs::mongo {

std::vector<bson_ptr> results_as_bson(const std::vector<completion>& batch, refusals& refused) {
  thread_local simdjson::ondemand::parser parser;
  std::vector<bson_ptr> docs(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::string json = batch[i].result_json;
    auto conv = json_to_bson(parser, json);
    if (conv.doc) {
      if (auto why = oversized_answer(conv.doc->len)) conv = {nullptr, *why};
    }
    if (conv.doc) docs[i] = std::move(conv.doc);
    else refused.emplace_back(batch[i].ref.id, conv.error);
  }
  return docs;
}

std::vector<lease_ref> settle_renewals(const std::vector<lease_ref>& refs, const bulk_verdict& out, store_time until,
                                       renew_result& res) {
  res.applied = static_cast<std::size_t>(out.matched);
  refusals refused;
  auto sent = split_refused(refs, out, refused);
  warn_each(refused, "renewal refused (the lease will expire)");
  for (auto& r : refused) res.lost.push_back(r.first);
  for (std::size_t i = 0; i < res.applied; ++i) res.until.push_back(until);
  return sent;
}

parsed_completions parse_completions(const std::vector<completion>& batch, write_result& res) {
  parsed_completions out;
  if (batch.empty()) return out;
  out.results = results_as_bson(batch, res.refused);
  const auto converted = [&](const completion& x) { return out.result_of(batch, x) != nullptr; };
  out.items = parse_batch(batch, res.lost, converted);
  return out;
}

void warn_each(const refusals& refused, const char* what) {
  for (auto& [id, why] : refused) log::item(log::level::warn, id, what, why);
}

namespace {

std::vector<bson_ptr> read_by_ids(mongoc_collection_t* coll, const std::vector<lease_ref>& refs) {
  std::vector<owned_id> ids;
  for (const auto& r : refs)
    if (auto id = id_from_text(r.id)) ids.push_back(*id);
  std::vector<bson_value_t> values;
  for (auto& id : ids) values.push_back(id.value());
  return find_docs(coll, id_in_filter(values).get(), nullptr, "reading lease states");
}

}  // namespace

lease_states read_document_states(mongoc_collection_t* coll, const std::vector<lease_ref>& refs, const field_names& f) {
  return document_states(read_by_ids(coll, refs), f);
}

lease_states read_lock_states(mongoc_collection_t* locks, const std::vector<lease_ref>& refs) {
  return lock_states(read_by_ids(locks, refs));
}

std::vector<std::string> lost_documents(fenced_write kind, mongoc_collection_t* coll, const std::vector<lease_ref>& sent,
                                        std::int64_t matched, const field_names& f) {
  if (!something_lost(sent.size(), matched)) return {};
  return attribute_lost(kind, sent, matched, read_document_states(coll, sent, f));
}

std::vector<std::string> lost_locks(fenced_write kind, mongoc_collection_t* locks, const std::vector<lease_ref>& sent,
                                    std::int64_t matched) {
  if (!something_lost(sent.size(), matched)) return {};
  return attribute_lost(kind, sent, matched, read_lock_states(locks, sent));
}

}  // namespace dibs::mongo
