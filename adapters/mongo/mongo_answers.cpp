#include "mongo_answers.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "store_impl.hpp"

#include <algorithm>

namespace dibs::mongo {

namespace {
class mongo_answers final : public answer_store {
 public:
  explicit mongo_answers(std::shared_ptr<mongo_store> store) : store_(std::move(store)), ctx_(store_context_of(*store_)) {}

  std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_answers");
    const auto now = now_ms();
    auto filter = make_bson();
    BSON_APPEND_UTF8(filter.get(), "_id", k.digest.c_str());
    bson_t newer;
    BSON_APPEND_DOCUMENT_BEGIN(filter.get(), "stored_at_ms", &newer);
    BSON_APPEND_INT64(&newer, "$gt", now - ttl.count());
    bson_append_document_end(filter.get(), &newer);
    auto opts = find_opts(nullptr, 1);
    auto docs = find_docs(coll.get(), filter.get(), opts.get(), "stored answers (find)");
    if (docs.empty() || !has_path(docs[0].get(), "answer", true)) return std::nullopt;
    const auto stored_at = read_i64(docs[0].get(), "stored_at_ms").value_or(now);
    return kept_answer{read_str(docs[0].get(), "answer"), std::chrono::milliseconds(std::max<std::int64_t>(now - stored_at, 0))};
  }

  void keep(const std::vector<std::pair<answer_key, std::string>>& answers) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_answers");
    for (const auto& [k, answer] : answers) keep_one(coll.get(), k, answer);
  }

 private:
  void keep_one(mongoc_collection_t* coll, const answer_key& k, const std::string& answer) {
    auto filter = make_bson();
    BSON_APPEND_UTF8(filter.get(), "_id", k.digest.c_str());
    auto update = make_bson();
    bson_t set;
    BSON_APPEND_DOCUMENT_BEGIN(update.get(), "$set", &set);
    BSON_APPEND_UTF8(&set, "request", k.request.c_str());
    bson_append_utf8(&set, "answer", -1, answer.data(), static_cast<int>(answer.size()));
    BSON_APPEND_INT64(&set, "stored_at_ms", now_ms());
    bson_append_document_end(update.get(), &set);
    auto opts = make_bson();
    BSON_APPEND_BOOL(opts.get(), "upsert", true);
    bson_error_t err;
    driver_reply reply;
    // Two processes upserting one new request at once: the second may meet the first's insert
    // (E11000). Either answer will do.
    if (!mongoc_collection_update_one(coll, filter.get(), update.get(), opts.get(), reply.out(), &err) &&
        err.code != 11000)
      throw mongo_error("stored answers (update_one)", err);
  }

  std::int64_t now_ms() const {
    ctx_.clock.refresh_if_due();
    return std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.clock.now().time_since_epoch()).count();
  }

  std::shared_ptr<mongo_store> store_;
  store_context& ctx_;
};
}  // namespace

std::shared_ptr<answer_store> make_mongo_answers(std::shared_ptr<mongo_store> store) {
  return std::make_shared<mongo_answers>(std::move(store));
}

}  // namespace dibs::mongo
