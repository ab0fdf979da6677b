// dibs's own records on MongoDB (own_records.hpp): one collection a kind beside the user's, a
// record a document {_id: key, <number>: ..., <text>: ..., <stamp>_ms: the store's time}. The
// store's time is this process's estimate of the server's clock (store_context's), as the claims
// use. A swap writes only over the numbers it read (a filter on each), so two processes never
// both pass; a put is one unordered bulk of upserts.
#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "store_impl.hpp"

#include <stdexcept>

namespace dibs::mongo {

namespace {
class mongo_record_table final : public record_table {
 public:
  mongo_record_table(std::shared_ptr<mongo_store> store, store_context& ctx, record_kind kind)
      : store_(std::move(store)), ctx_(ctx), kind_(std::move(kind)), stamp_(kind_.stamp.empty() ? "" : kind_.stamp + "_ms") {}

  record_read read(const std::string& key) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, kind_.table);
    const auto now = now_us(c.get());
    auto opts = find_opts(nullptr, 1);
    BSON_APPEND_INT64(opts.get(), "maxTimeMS", 2000);  // as the SQL stores' 2 s
    auto docs = find_docs(coll.get(), key_filter(key).get(), opts.get(), kind_.table + " (find)");
    record_read out{std::nullopt, now};
    if (!docs.empty()) out.record = record_of(docs[0].get(), key, now);
    return out;
  }

  bool swap(const std::string& key, const std::optional<std::vector<std::int64_t>>& seen,
            const std::vector<std::int64_t>& next) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, kind_.table);
    const auto now_ms = now_us(c.get()) / 1000;
    bson_error_t err;
    driver_reply reply;
    if (!seen) {
      auto doc = key_filter(key);
      append_numbers(doc.get(), next, now_ms);
      if (mongoc_collection_insert_one(coll.get(), doc.get(), nullptr, reply.out(), &err)) return true;
      if (err.code == 11000) return false;  // another process made it first
      throw mongo_error(kind_.table + " (insert)", err);
    }
    auto filter = key_filter(key);
    for (std::size_t i = 0; i < kind_.numbers.size(); ++i) {
      const auto was = i < seen->size() ? (*seen)[i] : 0;
      if (was != 0) {
        BSON_APPEND_INT64(filter.get(), kind_.numbers[i].c_str(), was);
        continue;
      }
      // Read as 0 may be missing: {$in: [0, null]} matches both.
      bson_t in, list;
      BSON_APPEND_DOCUMENT_BEGIN(filter.get(), kind_.numbers[i].c_str(), &in);
      BSON_APPEND_ARRAY_BEGIN(&in, "$in", &list);
      BSON_APPEND_INT64(&list, "0", 0);
      BSON_APPEND_NULL(&list, "1");
      bson_append_array_end(&in, &list);
      bson_append_document_end(filter.get(), &in);
    }
    auto update = make_bson();
    bson_t set;
    BSON_APPEND_DOCUMENT_BEGIN(update.get(), "$set", &set);
    append_numbers(&set, next, now_ms);
    bson_append_document_end(update.get(), &set);
    if (!mongoc_collection_update_one(coll.get(), filter.get(), update.get(), nullptr, reply.out(), &err))
      throw mongo_error(kind_.table + " (updateOne)", err);
    return reply_int(reply.get(), "matchedCount") == 1;
  }

  // One unordered bulk of upserts: a round trip per put, not per record.
  bool put(const std::vector<own_record>& records) override {
    if (records.empty()) return true;
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, kind_.table);
    auto upsert = make_bson();
    BSON_APPEND_BOOL(upsert.get(), "upsert", true);
    const auto now_ms = now_us(c.get()) / 1000;
    std::vector<fenced_update> statements;  // fenced by nothing but the key: an upsert each
    for (const auto& r : records) {
      fenced_update s{key_filter(r.key), make_bson()};
      bson_t set;
      BSON_APPEND_DOCUMENT_BEGIN(s.update.get(), "$set", &set);
      append_numbers(&set, r.numbers, now_ms);
      for (std::size_t i = 0; i < kind_.texts.size(); ++i) {
        const auto& t = i < r.texts.size() ? r.texts[i] : std::string();
        bson_append_utf8(&set, kind_.texts[i].c_str(), -1, t.data(), static_cast<int>(t.size()));
      }
      bson_append_document_end(s.update.get(), &set);
      statements.push_back(std::move(s));
    }
    const auto v = bulk_update(coll.get(), statements, kind_.table + " (bulk upsert)", upsert.get());
    // Two processes upserting one new key at once: the second may meet the first's insert
    // (E11000). Either record will do; any other refusal is the store's failure.
    for (const auto& e : v.refused)
      if (e.code != 11000) throw mongo_error(kind_.table + " (bulk upsert): " + refusal_reason(e));
    // Every statement accounted for: a bulk the driver split, whose later part failed, must
    // not pass for written.
    const auto accounted = v.matched + v.upserted + static_cast<std::int64_t>(v.refused.size());
    if (accounted != static_cast<std::int64_t>(records.size()))
      throw mongo_error(kind_.table + " (bulk upsert): the server accounted for " + std::to_string(accounted) + " of " +
                        std::to_string(records.size()) + " records");
    return true;
  }

  std::vector<own_record> list() override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, kind_.table);
    const auto now = now_us(c.get());
    auto all = make_bson();
    std::vector<own_record> out;
    for (auto& d : find_docs(coll.get(), all.get(), find_opts(nullptr, 0, "_id").get(), kind_.table + " (find)")) {
      bson_iter_t it;
      if (bson_iter_init_find(&it, d.get(), "_id") && BSON_ITER_HOLDS_UTF8(&it))
        out.push_back(record_of(d.get(), bson_iter_utf8(&it, nullptr), now));
    }
    return out;
  }

  std::uint64_t remove_older(std::chrono::microseconds age) override {
    if (stamp_.empty()) throw std::logic_error(kind_.table + " keeps no stamp to age its records by");
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, kind_.table);
    auto filter = make_bson();
    bson_t older;
    BSON_APPEND_DOCUMENT_BEGIN(filter.get(), stamp_.c_str(), &older);
    BSON_APPEND_INT64(&older, "$lt", (now_us(c.get()) - age.count()) / 1000);
    bson_append_document_end(filter.get(), &older);
    bson_error_t err;
    driver_reply reply;
    if (!mongoc_collection_delete_many(coll.get(), filter.get(), nullptr, reply.out(), &err))
      throw mongo_error(kind_.table + " (deleteMany)", err);
    return static_cast<std::uint64_t>(reply_int(reply.get(), "deletedCount"));
  }

 private:
  // The store's time, measured again on `held` (the caller's client) when a refresh is due.
  std::int64_t now_us(mongoc_client_t* held) const {
    ctx_.clock.refresh_if_due(held);
    return std::chrono::duration_cast<std::chrono::microseconds>(ctx_.clock.now().time_since_epoch()).count();
  }

  static bson_ptr key_filter(const std::string& key) {
    auto f = make_bson();
    BSON_APPEND_UTF8(f.get(), "_id", key.c_str());
    return f;
  }

  void append_numbers(bson_t* doc, const std::vector<std::int64_t>& numbers, std::int64_t now_ms) const {
    for (std::size_t i = 0; i < kind_.numbers.size(); ++i)
      BSON_APPEND_INT64(doc, kind_.numbers[i].c_str(), i < numbers.size() ? numbers[i] : 0);
    if (!stamp_.empty()) BSON_APPEND_INT64(doc, stamp_.c_str(), now_ms);
  }

  own_record record_of(const bson_t* doc, std::string key, std::int64_t now) const {
    own_record r;
    r.key = std::move(key);
    for (const auto& n : kind_.numbers) r.numbers.push_back(read_i64(doc, n).value_or(0));
    for (const auto& t : kind_.texts) r.texts.push_back(read_str(doc, t));
    if (!stamp_.empty()) r.age = std::chrono::microseconds(std::max<std::int64_t>(now - read_i64(doc, stamp_).value_or(0) * 1000, 0));
    return r;
  }

  std::shared_ptr<mongo_store> store_;
  store_context& ctx_;
  record_kind kind_;
  std::string stamp_;
};
}  // namespace

// A collection needs no making: the first write makes it.
std::shared_ptr<record_table> mongo_store::open_records(const record_kind& kind, bool) {
  return std::make_shared<mongo_record_table>(shared_from_this(), impl_->ctx, kind);
}

}  // namespace dibs::mongo
