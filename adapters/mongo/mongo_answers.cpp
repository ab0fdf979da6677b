#include "mongo_answers.hpp"

#include "bson_read.hpp"
#include "collection_ops.hpp"
#include "driver_handles.hpp"
#include "store_impl.hpp"
#include "write_errors.hpp"

#include <algorithm>

namespace dibs::mongo {

namespace {
class mongo_answers final : public answer_store {
 public:
  explicit mongo_answers(std::shared_ptr<mongo_store> store) : store_(std::move(store)), ctx_(store_context_of(*store_)) {}

  std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) override {
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_answers");
    const auto now = now_ms(c.get());
    auto filter = make_bson();
    BSON_APPEND_UTF8(filter.get(), "_id", k.digest.c_str());
    bson_t newer;
    BSON_APPEND_DOCUMENT_BEGIN(filter.get(), "stored_at_ms", &newer);
    BSON_APPEND_INT64(&newer, "$gt", now - ttl.count());
    bson_append_document_end(filter.get(), &newer);
    auto opts = find_opts(nullptr, 1);
    BSON_APPEND_INT64(opts.get(), "maxTimeMS", 2000);  // a leader waits for it: as the SQL stores' 2 s
    auto docs = find_docs(coll.get(), filter.get(), opts.get(), "stored answers (find)");
    if (docs.empty() || !has_path(docs[0].get(), "answer", true)) return std::nullopt;
    const auto stored_at = read_i64(docs[0].get(), "stored_at_ms").value_or(now);
    return kept_answer{read_str(docs[0].get(), "answer"), std::chrono::milliseconds(std::max<std::int64_t>(now - stored_at, 0))};
  }

  // One unordered bulk of upserts: a round trip per batch, not per answer.
  void keep(const std::vector<std::pair<answer_key, std::string>>& answers) override {
    if (answers.empty()) return;
    auto c = ctx_.conn.client();
    auto coll = primary_collection(c.get(), ctx_.opts.db, "dibs_answers");
    auto upsert = make_bson();
    BSON_APPEND_BOOL(upsert.get(), "upsert", true);
    const auto now = now_ms(c.get());
    std::vector<fenced_update> statements;  // fenced by nothing but the key: an upsert each
    for (const auto& [k, answer] : answers) {
      fenced_update s{make_bson(), make_bson()};
      BSON_APPEND_UTF8(s.filter.get(), "_id", k.digest.c_str());
      bson_t set;
      BSON_APPEND_DOCUMENT_BEGIN(s.update.get(), "$set", &set);
      BSON_APPEND_UTF8(&set, "request", k.request.c_str());
      bson_append_utf8(&set, "answer", -1, answer.data(), static_cast<int>(answer.size()));
      BSON_APPEND_INT64(&set, "stored_at_ms", now);
      bson_append_document_end(s.update.get(), &set);
      statements.push_back(std::move(s));
    }
    const auto v = bulk_update(coll.get(), statements, "stored answers (bulk upsert)", upsert.get());
    // Two processes upserting one new request at once: the second may meet the first's insert
    // (E11000). Either answer will do; any other refusal is the store's failure.
    for (const auto& e : v.refused)
      if (e.code != 11000) throw mongo_error("stored answers (bulk upsert): " + refusal_reason(e));
    // Every statement accounted for: a bulk the driver split, whose later part failed, must
    // not pass for kept.
    const auto accounted = v.matched + v.upserted + static_cast<std::int64_t>(v.refused.size());
    if (accounted != static_cast<std::int64_t>(answers.size()))
      throw mongo_error("stored answers (bulk upsert): the server accounted for " + std::to_string(accounted) + " of " +
                        std::to_string(answers.size()) + " answers");
  }

  // The store's time, measured again on `held` (the caller's client) when a refresh is due.
  std::int64_t now_ms(mongoc_client_t* held) const {
    ctx_.clock.refresh_if_due(held);
    return std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.clock.now().time_since_epoch()).count();
  }

  std::shared_ptr<mongo_store> store_;
  store_context& ctx_;
};
}  // namespace

std::shared_ptr<answer_store> make_mongo_answers(std::shared_ptr<mongo_store> store) {
  return std::make_shared<mongo_answers>(std::move(store));
}

std::shared_ptr<answer_store> mongo_store::open_answers() { return make_mongo_answers(shared_from_this()); }

}  // namespace dibs::mongo
