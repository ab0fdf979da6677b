// The call budget kept for every process on MongoDB (`budget N/day`; budget_store.hpp): one
// document per key in the collection `dibs_budget`, {_id: key, used, budget_limit}. A take reads
// the document and adds its grant only if `used` is still what it read (a compare and set, tried
// again when another process wrote first), so no take passes the limit.
#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "store_impl.hpp"

#include "engine/src/budget_store.hpp"

#include <stdexcept>

namespace dibs::mongo {

namespace {
class mongo_budget final : public budget_store {
 public:
  explicit mongo_budget(std::shared_ptr<mongo_store> store) : store_(std::move(store)), ctx_(store_context_of(*store_)) {}

  budget_take take(const std::string& key, std::uint64_t want, std::uint64_t limit) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_budget");
    for (int attempt = 0; attempt < 100; ++attempt) {
      const auto used = read_used(coll.get(), key);
      const auto granted = budget_grant(used.value_or(0), want, limit);
      bson_error_t err;
      driver_reply reply;
      if (!used) {
        auto doc = make_bson();
        BSON_APPEND_UTF8(doc.get(), "_id", key.c_str());
        BSON_APPEND_INT64(doc.get(), "used", static_cast<std::int64_t>(granted));
        BSON_APPEND_INT64(doc.get(), "budget_limit", static_cast<std::int64_t>(limit));
        if (mongoc_collection_insert_one(coll.get(), doc.get(), nullptr, reply.out(), &err)) return {granted, granted};
        if (err.code == 11000) continue;  // another process made it first: read it
        throw mongo_error("budget (insert)", err);
      }
      if (swap_used(coll.get(), key, *used, *used + granted, limit)) return {granted, *used + granted};
    }
    throw std::runtime_error("budget: the record of " + key + " kept changing under 100 tries");
  }

  void give_back(const std::string& key, std::uint64_t n) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_budget");
    for (int attempt = 0; attempt < 100; ++attempt) {
      const auto used = read_used(coll.get(), key);
      if (!used || swap_used(coll.get(), key, *used, *used > n ? *used - n : 0, std::nullopt)) return;
    }
  }

  std::vector<budget_record> records() override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_budget");
    auto all = make_bson();
    std::vector<budget_record> out;
    for (auto& d : find_docs(coll.get(), all.get(), find_opts(nullptr, 0).get(), "budget (find)")) {
      bson_iter_t it;
      std::string key;
      if (bson_iter_init_find(&it, d.get(), "_id") && BSON_ITER_HOLDS_UTF8(&it)) key = bson_iter_utf8(&it, nullptr);
      out.push_back({key, static_cast<std::uint64_t>(read_i64(d.get(), "used").value_or(0)),
                     static_cast<std::uint64_t>(read_i64(d.get(), "budget_limit").value_or(0))});
    }
    return out;
  }

 private:
  // `used` set to `to` if it is still `from` (and the limit recorded); false when another process wrote first.
  static bool swap_used(mongoc_collection_t* coll, const std::string& key, std::uint64_t from, std::uint64_t to,
                        std::optional<std::uint64_t> limit) {
    auto filter = make_bson();
    BSON_APPEND_UTF8(filter.get(), "_id", key.c_str());
    BSON_APPEND_INT64(filter.get(), "used", static_cast<std::int64_t>(from));
    auto update = make_bson();
    bson_t set;
    BSON_APPEND_DOCUMENT_BEGIN(update.get(), "$set", &set);
    BSON_APPEND_INT64(&set, "used", static_cast<std::int64_t>(to));
    if (limit) BSON_APPEND_INT64(&set, "budget_limit", static_cast<std::int64_t>(*limit));
    bson_append_document_end(update.get(), &set);
    bson_error_t err;
    driver_reply reply;
    if (!mongoc_collection_update_one(coll, filter.get(), update.get(), nullptr, reply.out(), &err))
      throw mongo_error("budget (updateOne)", err);
    return reply_int(reply.get(), "matchedCount") == 1;
  }

  static std::optional<std::uint64_t> read_used(mongoc_collection_t* coll, const std::string& key) {
    auto filter = make_bson();
    BSON_APPEND_UTF8(filter.get(), "_id", key.c_str());
    auto docs = find_docs(coll, filter.get(), find_opts(nullptr, 1).get(), "budget (find)");
    if (docs.empty()) return std::nullopt;
    return static_cast<std::uint64_t>(std::max<std::int64_t>(read_i64(docs[0].get(), "used").value_or(0), 0));
  }

  std::shared_ptr<mongo_store> store_;
  store_context& ctx_;
};
}  // namespace

std::shared_ptr<budget_store> mongo_store::open_budget() { return std::make_shared<mongo_budget>(shared_from_this()); }

}  // namespace dibs::mongo
