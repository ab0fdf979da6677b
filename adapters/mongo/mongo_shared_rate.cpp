#include "mongo_shared_rate.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "store_impl.hpp"

#include "engine/src/rate_bucket.hpp"

#include <optional>
#include <stdexcept>

namespace dibs::mongo {

namespace {
struct record {
  rate_bucket_state state;
  bool exists = false;
};

class mongo_shared_rate final : public shared_rate_store {
 public:
  explicit mongo_shared_rate(std::shared_ptr<mongo_store> store) : store_(std::move(store)), ctx_(store_context_of(*store_)) {}

  rate_block take_block(const rate_block_request& r) override {
    rate_block out;
    change(r.origin, [&](const rate_bucket_state& s, std::int64_t now) {
      const auto g = grant_block(s, now, r.want, r.interval.count());
      out = g.block;
      return g.next;
    });
    return out;
  }

  void pause(const std::string& origin, std::chrono::microseconds for_) override {
    change(origin, [&](const rate_bucket_state& s, std::int64_t now) { return pause_bucket(s, now, for_.count()); });
  }

  std::chrono::microseconds paused_for(const std::string& origin) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_rate");
    const auto rec = read(coll.get(), origin);
    return std::chrono::microseconds(paused_for_us(rec.state, now_us(c.get())));
  }

 private:
  // The store's time, measured again on `held` (the caller's client) when a refresh is due.
  std::int64_t now_us(mongoc_client_t* held) const {
    ctx_.clock.refresh_if_due(held);
    return std::chrono::duration_cast<std::chrono::microseconds>(ctx_.clock.now().time_since_epoch()).count();
  }

  static record read(mongoc_collection_t* coll, const std::string& origin) {
    auto filter = make_bson();
    BSON_APPEND_UTF8(filter.get(), "_id", origin.c_str());
    auto opts = find_opts(nullptr, 1);
    auto docs = find_docs(coll, filter.get(), opts.get(), "shared rate (find)");
    record r;
    if (docs.empty()) return r;
    r.exists = true;
    r.state.tat_us = read_i64(docs[0].get(), "tat_us").value_or(0);
    r.state.paused_until_us = read_i64(docs[0].get(), "paused_until_us").value_or(0);
    return r;
  }

  // Read, decide, write if unchanged; again when another process wrote first.
  template <class Decide>
  void change(const std::string& origin, Decide decide) {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_rate");
    for (int attempt = 0; attempt < 100; ++attempt) {
      const auto rec = read(coll.get(), origin);
      const auto next = decide(rec.state, now_us(c.get()));
      bson_error_t err;
      driver_reply reply;
      if (!rec.exists) {
        auto doc = make_bson();
        BSON_APPEND_UTF8(doc.get(), "_id", origin.c_str());
        BSON_APPEND_INT64(doc.get(), "tat_us", next.tat_us);
        BSON_APPEND_INT64(doc.get(), "paused_until_us", next.paused_until_us);
        if (mongoc_collection_insert_one(coll.get(), doc.get(), nullptr, reply.out(), &err)) return;
        if (err.code == 11000) continue;  // another process made it first: read it
        throw mongo_error("shared rate (insert)", err);
      }
      auto filter = make_bson();
      BSON_APPEND_UTF8(filter.get(), "_id", origin.c_str());
      BSON_APPEND_INT64(filter.get(), "tat_us", rec.state.tat_us);
      BSON_APPEND_INT64(filter.get(), "paused_until_us", rec.state.paused_until_us);
      auto update = make_bson();
      bson_t set;
      BSON_APPEND_DOCUMENT_BEGIN(update.get(), "$set", &set);
      BSON_APPEND_INT64(&set, "tat_us", next.tat_us);
      BSON_APPEND_INT64(&set, "paused_until_us", next.paused_until_us);
      bson_append_document_end(update.get(), &set);
      if (!mongoc_collection_update_one(coll.get(), filter.get(), update.get(), nullptr, reply.out(), &err))
        throw mongo_error("shared rate (updateOne)", err);
      if (reply_int(reply.get(), "matchedCount") == 1) return;
    }
    throw std::runtime_error("shared rate: the record of " + origin + " kept changing under 100 tries");
  }

  std::shared_ptr<mongo_store> store_;
  store_context& ctx_;
};
}  // namespace

std::shared_ptr<shared_rate_store> make_mongo_shared_rate(std::shared_ptr<mongo_store> store) {
  return std::make_shared<mongo_shared_rate>(std::move(store));
}

store_context& store_context_of(mongo_store& s) { return s.impl_->ctx; }

std::shared_ptr<shared_rate_store> mongo_store::open_shared_rate() { return make_mongo_shared_rate(shared_from_this()); }

}  // namespace dibs::mongo
