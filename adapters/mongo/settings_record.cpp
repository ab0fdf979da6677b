#include "settings_record.hpp"

#include <algorithm>

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "store_context.hpp"

#include <dibs/field_mapping.hpp>
#include <dibs/log.hpp>

#include <chrono>

namespace dibs::mongo {

namespace {
constexpr const char* settings_collection = "dibs_settings";

bson_ptr by_collection(const std::string& name) {
  auto f = make_bson();
  BSON_APPEND_UTF8(f.get(), "_id", name.c_str());
  return f;
}

}  // namespace

settings_record in_effect_settings(const mongo_options& o) {
  settings_record r{{"source", o.names.source}, {"target", o.names.target}, {"lock_field", o.names.lock}};
  if (!o.map.empty()) r.emplace_back("map", o.map);
  return r;
}

settings_record read_settings_record(store_context& ctx) {
  auto c = ctx.conn.client();
  auto coll = primary_collection(c.get(), ctx.opts.db, settings_collection);
  const auto docs = find_docs(coll.get(), by_collection(ctx.opts.collection).get(), find_opts(nullptr, 1).get(),
                              "reading dibs init's settings");
  settings_record r;
  if (docs.empty()) return r;
  for (const char* name : {"source", "target", "lock_field", "map"})
    if (has_path(docs.front().get(), name, true)) r.emplace_back(name, read_str(docs.front().get(), name));
  return r;
}

void write_settings_record(store_context& ctx) {
  auto c = ctx.conn.client();
  auto coll = primary_collection(c.get(), ctx.opts.db, settings_collection);
  // {$set: {...}} with upsert: every field the record keeps is set, so this replaces it.
  auto update = make_bson();
  bson_t set;
  BSON_APPEND_DOCUMENT_BEGIN(update.get(), "$set", &set);
  for (const auto& [name, value] : in_effect_settings(ctx.opts)) BSON_APPEND_UTF8(&set, name.c_str(), value.c_str());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  BSON_APPEND_DATE_TIME(&set, "recorded_at", now.count());
  bson_append_document_end(update.get(), &set);
  if (ctx.opts.map.empty()) {  // a mapping given away (map '') goes from the record
    bson_t unset;
    BSON_APPEND_DOCUMENT_BEGIN(update.get(), "$unset", &unset);
    BSON_APPEND_UTF8(&unset, "map", "");
    bson_append_document_end(update.get(), &unset);
  }
  auto opts = make_bson();
  BSON_APPEND_BOOL(opts.get(), "upsert", true);
  bson_error_t err;
  if (!mongoc_collection_update_one(coll.get(), by_collection(ctx.opts.collection).get(), update.get(), opts.get(), nullptr, &err))
    throw mongo_error("recording the settings in " + ctx.opts.db + "." + settings_collection, err);
}

settings_record apply_settings_record(store_context& ctx) {
  auto& use = ctx.opts.settings;
  const auto recorded = use.read ? read_settings_record(ctx) : settings_record{};
  const std::string where = "collection " + ctx.opts.db + "." + ctx.opts.collection;
  auto& n = ctx.opts.names;
  const auto mapping = resolve_mapping(ctx.opts.map, n.mapped, use, recorded, where);
  n.mapped = mapping.names;
  ctx.opts.map = mapping.recorded;
  n.source = resolve_setting("source", n.source, use, recorded, where);
  n.target = resolve_setting("target", n.target, use, recorded, where);
  n.lock = resolve_setting("lock_field", n.lock, use, recorded, where);
  // The source (perhaps the record's, named after the request's fields were listed) is read as
  // the source, not twice.
  n.more.erase(std::remove(n.more.begin(), n.more.end(), n.source), n.more.end());
  check_mapped_names(n.mapped, {"_id", n.source, n.target, {n.lock}, "", false});
  if (!use.read) return {};
  use.result->found = !recorded.empty();
  use.result->in_effect = in_effect_settings(ctx.opts);
  if (!recorded.empty()) log::debug("mongodb: the settings dibs init recorded for ", where, " are in effect");
  return recorded;
}

}  // namespace dibs::mongo
