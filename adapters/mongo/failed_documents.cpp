#include "failed_documents.hpp"

#include "bson_parts.hpp"
#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "ids.hpp"
#include "protocol.hpp"
#include "store_context.hpp"

#include <cctype>

namespace dibs::mongo {

std::string regex_literal(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u) && c != ' ' && c != '_') out += '\\';
    out += c;
  }
  return out;
}

bson_ptr failed_selection_filter(const field_names& f, const std::string& reason_contains,
                                 std::optional<store_time> since, const std::optional<std::string>& reason_is,
                                 const std::vector<std::string>& ids) {
  auto b = recorded_failure_filter(f);
  if (!ids.empty()) {
    std::vector<owned_id> parsed;  // an id no document can have matches nothing
    for (const auto& text : ids)
      if (auto id = id_from_text(text)) parsed.push_back(std::move(*id));
    bson_t in, values;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), "_id", &in);
    BSON_APPEND_ARRAY_BEGIN(&in, "$in", &values);
    for (std::size_t i = 0; i < parsed.size(); ++i) bson_append_value(&values, std::to_string(i).c_str(), -1, &parsed[i].value());
    bson_append_array_end(&in, &values);
    bson_append_document_end(b.get(), &in);
  }
  if (!reason_contains.empty() || reason_is) {
    bson_t r;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), (f.lock_failed() + ".reason").c_str(), &r);
    if (reason_is && reason_is->empty()) {  // failure_reasons groups a missing reason with ""
      bson_t values;
      BSON_APPEND_ARRAY_BEGIN(&r, "$in", &values);
      BSON_APPEND_UTF8(&values, "0", "");
      BSON_APPEND_NULL(&values, "1");
      bson_append_array_end(&r, &values);
    } else if (reason_is) {
      BSON_APPEND_UTF8(&r, "$eq", reason_is->c_str());
    }
    if (!reason_contains.empty()) BSON_APPEND_UTF8(&r, "$regex", regex_literal(reason_contains).c_str());
    bson_append_document_end(b.get(), &r);
  }
  if (since) {
    bson_t at;
    BSON_APPEND_DOCUMENT_BEGIN(b.get(), (f.lock_failed() + ".at").c_str(), &at);
    BSON_APPEND_DATE_TIME(&at, "$gte", ms(*since));
    bson_append_document_end(b.get(), &at);
  }
  return b;
}

bson_ptr retry_update(const field_names& f) {
  auto b = make_bson();
  bson_t unset;
  BSON_APPEND_DOCUMENT_BEGIN(b.get(), "$unset", &unset);
  BSON_APPEND_UTF8(&unset, f.lock.c_str(), "");
  bson_append_document_end(b.get(), &unset);
  return b;
}

bson_ptr failure_reasons_pipeline(const field_names& f, std::size_t top) {
  auto b = make_bson();
  bson_t stages, match, group, group_body, sum, first, last, sort_stage, sort, limit;
  BSON_APPEND_ARRAY_BEGIN(b.get(), "pipeline", &stages);
  BSON_APPEND_DOCUMENT_BEGIN(&stages, "0", &match);
  auto filter = recorded_failure_filter(f);
  BSON_APPEND_DOCUMENT(&match, "$match", filter.get());
  bson_append_document_end(&stages, &match);
  BSON_APPEND_DOCUMENT_BEGIN(&stages, "1", &group);
  BSON_APPEND_DOCUMENT_BEGIN(&group, "$group", &group_body);
  // A missing reason is grouped with "" (as the SQL stores' COALESCE does), the group that
  // failed_selection_filter's reason_is "" selects.
  bson_t if_null, if_null_args;
  BSON_APPEND_DOCUMENT_BEGIN(&group_body, "_id", &if_null);
  BSON_APPEND_ARRAY_BEGIN(&if_null, "$ifNull", &if_null_args);
  BSON_APPEND_UTF8(&if_null_args, "0", ("$" + f.lock_failed() + ".reason").c_str());
  BSON_APPEND_UTF8(&if_null_args, "1", "");
  bson_append_array_end(&if_null, &if_null_args);
  bson_append_document_end(&group_body, &if_null);
  BSON_APPEND_DOCUMENT_BEGIN(&group_body, "count", &sum);
  BSON_APPEND_INT32(&sum, "$sum", 1);
  bson_append_document_end(&group_body, &sum);
  BSON_APPEND_DOCUMENT_BEGIN(&group_body, "first", &first);
  BSON_APPEND_UTF8(&first, "$min", "$_id");
  bson_append_document_end(&group_body, &first);
  BSON_APPEND_DOCUMENT_BEGIN(&group_body, "last", &last);
  BSON_APPEND_UTF8(&last, "$max", "$_id");
  bson_append_document_end(&group_body, &last);
  bson_append_document_end(&group, &group_body);
  bson_append_document_end(&stages, &group);
  BSON_APPEND_DOCUMENT_BEGIN(&stages, "2", &sort_stage);
  BSON_APPEND_DOCUMENT_BEGIN(&sort_stage, "$sort", &sort);
  BSON_APPEND_INT32(&sort, "count", -1);
  BSON_APPEND_INT32(&sort, "_id", 1);
  bson_append_document_end(&sort_stage, &sort);
  bson_append_document_end(&stages, &sort_stage);
  BSON_APPEND_DOCUMENT_BEGIN(&stages, "3", &limit);
  BSON_APPEND_INT64(&limit, "$limit", static_cast<std::int64_t>(top));
  bson_append_document_end(&stages, &limit);
  bson_append_array_end(b.get(), &stages);
  return b;
}

namespace {
// The selection of `which` (`since_ago` by the server's clock).
bson_ptr selection_of(store_context& ctx, const retry_filter& which) {
  std::optional<store_time> since = which.since;
  if (which.since_ago) {
    const auto ago = ctx.clock.now() - std::chrono::duration_cast<store_time::duration>(*which.since_ago);
    if (!since || ago > *since) since = ago;
  }
  return failed_selection_filter(ctx.names(), which.reason_contains, since, which.reason_is, which.ids);
}
}  // namespace

std::uint64_t retry_failed_documents(store_context& ctx, const retry_filter& which, bool lock_collection) {
  const auto filter = selection_of(ctx, which);
  const store_session db(ctx);
  bson_error_t err;
  if (lock_collection) {
    // A failed document is never claimed, so nobody takes a lock on it between this and the reset.
    const auto failed = find_docs(db.documents.get(), filter.get(), find_opts(id_projection().get(), 0).get(),
                                  "reading the failed documents");
    if (!failed.empty()) {
      std::vector<bson_value_t> ids;  // views into `failed`, which outlives them
      for (const auto& d : failed) {
        bson_iter_t it;
        if (bson_iter_init_find(&it, d.get(), "_id")) ids.push_back(*bson_iter_value(&it));
      }
      if (!mongoc_collection_delete_many(db.locks.get(), id_in_filter(ids).get(), nullptr, nullptr, &err))
        throw mongo_error("removing the locks of failed documents", err);
    }
  }
  driver_reply reply;
  if (!mongoc_collection_update_many(db.documents.get(), filter.get(), retry_update(ctx.names()).get(), nullptr, reply.out(),
                                     &err))
    throw mongo_error("putting failed documents back", err);
  return static_cast<std::uint64_t>(reply_int(reply.get(), "modifiedCount"));
}

std::vector<failure_reason> failure_reason_counts(store_context& ctx, std::size_t top) {
  const store_session db(ctx);
  const auto pipeline = failure_reasons_pipeline(ctx.names(), top);
  cursor_ptr cursor(mongoc_collection_aggregate(db.documents.get(), MONGOC_QUERY_NONE, pipeline.get(), nullptr, nullptr));
  std::vector<failure_reason> out;
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor.get(), &doc)) {
    failure_reason r;
    r.reason = read_str(doc, "_id");
    r.count = static_cast<std::uint64_t>(read_i64(doc, "count").value_or(0));
    bson_iter_t it;
    if (bson_iter_init_find(&it, doc, "first")) r.example_ids.push_back(id_to_text(*bson_iter_value(&it)));
    if (bson_iter_init_find(&it, doc, "last")) {
      auto last = id_to_text(*bson_iter_value(&it));
      if (r.example_ids.empty() || r.example_ids.front() != last) r.example_ids.push_back(std::move(last));
    }
    out.push_back(std::move(r));
  }
  bson_error_t err;
  if (mongoc_cursor_error(cursor.get(), &err)) throw mongo_error("counting failure reasons", err);
  return out;
}

void list_failed_documents(store_context& ctx, const retry_filter& which, const std::function<void(const failed_item&)>& each) {
  const auto filter = selection_of(ctx, which);
  const store_session db(ctx);
  const auto& f = ctx.names();
  auto projection = make_bson();
  BSON_APPEND_INT32(projection.get(), "_id", 1);
  BSON_APPEND_INT32(projection.get(), f.source.c_str(), 1);
  BSON_APPEND_INT32(projection.get(), f.lock_failed().c_str(), 1);
  const auto opts = find_opts(projection.get(), 0, (f.lock_failed() + ".at").c_str(), 1);
  cursor_ptr cursor(mongoc_collection_find_with_opts(db.documents.get(), filter.get(), opts.get(), nullptr));
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor.get(), &doc)) {
    failed_item item;
    if (auto id = doc_id(doc)) item.id = id_to_text(id->value());
    const auto source = read_field(doc, f.source);
    if (source.st == job_field::state::string) item.source = source.value;
    else if (!source.json.empty()) item.source = source.json;
    item.reason = read_str(doc, f.lock_failed() + ".reason");
    item.http_status = read_int(doc, f.lock_failed() + ".httpStatus", 0);
    item.attempts = read_int(doc, f.lock_failed() + ".attempts", 0);
    bson_iter_t it, at;
    if (bson_iter_init(&it, doc) && bson_iter_find_descendant(&it, (f.lock_failed() + ".at").c_str(), &at) &&
        BSON_ITER_HOLDS_DATE_TIME(&at))
      item.failed_at = store_time(std::chrono::milliseconds(bson_iter_date_time(&at)));
    each(item);
  }
  bson_error_t err;
  if (mongoc_cursor_error(cursor.get(), &err)) throw mongo_error("reading the failed documents", err);
}

bool lock_collection_in_use(store_context& ctx) {
  const store_session db(ctx);
  const auto everything = make_bson();
  const auto any = find_docs(db.locks.get(), everything.get(), find_opts(id_projection().get(), 1).get(), "reading the locks");
  return !any.empty();
}

bool lock_collection_holds_leases(store_context& ctx) {
  const store_session db(ctx);
  auto leased = make_bson();
  bson_t exists;
  BSON_APPEND_DOCUMENT_BEGIN(leased.get(), "token", &exists);
  BSON_APPEND_BOOL(&exists, "$exists", true);
  bson_append_document_end(leased.get(), &exists);
  try {
    return !find_docs(db.locks.get(), leased.get(), find_opts(id_projection().get(), 1).get(), "reading the locks").empty();
  } catch (const mongo_error& e) {
    if (e.code == 13) return false;  // Unauthorized: a role scoped to the collection; no lock-collection run here
    throw;
  }
}

}  // namespace dibs::mongo
