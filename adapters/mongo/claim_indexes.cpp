#include "claim_indexes.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "ids.hpp"
#include "store_context.hpp"

#include <dibs/setting_error.hpp>

#include <algorithm>
#include <stdexcept>

namespace dibs::mongo {

std::string claim_index_name(const field_names& f) { return "dibs_claim_" + f.lock + "_until"; }

bool has_index(const std::vector<index_fact>& indexes, const std::string& name) {
  return std::any_of(indexes.begin(), indexes.end(), [&](const index_fact& i) { return i.name == name; });
}

std::optional<std::string> stale_claim_index(const std::vector<index_fact>& indexes, const field_names& f) {
  const auto name = claim_index_name(f);
  for (const auto& i : indexes)
    if (i.name == name && !i.partial_field.empty() && i.partial_field != f.target) return i.partial_field;
  return std::nullopt;
}

bool earlier_lock_field_in_use(const std::vector<index_fact>& indexes) {
  field_names now, earlier;
  earlier.lock = earlier_lock_field;
  return has_index(indexes, claim_index_name(earlier)) && !has_index(indexes, claim_index_name(now));
}

std::vector<index_fact> list_indexes(store_context& ctx) {
  const store_session db(ctx);
  cursor_ptr cursor(mongoc_collection_find_indexes_with_opts(db.documents.get(), nullptr));
  std::vector<index_fact> out;
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor.get(), &doc)) {
    index_fact f;
    f.name = read_str(doc, "name");
    bson_iter_t it, partial;
    if (bson_iter_init_find(&it, doc, "partialFilterExpression") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
        bson_iter_recurse(&it, &partial) && bson_iter_next(&partial))
      f.partial_field = bson_iter_key(&partial);
    out.push_back(std::move(f));
  }
  bson_error_t err;
  // A collection that is not there has no indexes (NamespaceNotFound).
  if (mongoc_cursor_error(cursor.get(), &err) && err.code != 26) throw mongo_error("listing the indexes of " + ctx.opts.collection, err);
  return out;
}

void drop_index(store_context& ctx, const std::string& name) {
  const store_session db(ctx);
  bson_error_t err;
  if (!mongoc_collection_drop_index_with_opts(db.documents.get(), name.c_str(), nullptr, &err))
    throw mongo_error("dropping the index " + name + " of " + ctx.opts.collection, err);
}

void require_free_lease_field(store_context& ctx) {
  const auto& f = ctx.names();
  const store_session db(ctx);
  const auto found = find_docs(db.documents.get(), has_field_filter(f.lock).get(), find_opts(id_projection().get(), 1).get(),
                               "looking for the lease field");
  if (found.empty()) return;
  bson_iter_t id;
  const std::string example = bson_iter_init_find(&id, found.front().get(), "_id") ? id_to_text(*bson_iter_value(&id)) : "?";
  throw std::invalid_argument("documents of " + ctx.opts.db + "." + ctx.opts.collection + " have a field " + f.lock +
                              " of their own (e.g. _id " + example + "): dibs keeps its lease there and "
                              "would overwrite it, so it leaves this collection alone; choose another " +
                              setting_name("lock_field") + " (" + setting_name("lock_field") + " dibs_lease), or rename that field");
}

}  // namespace dibs::mongo
