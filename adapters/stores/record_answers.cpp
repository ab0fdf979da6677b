// The answers kept in a store (`reuse_answers store`; answer_store.hpp) over the store's own
// records (own_records.hpp): one record a distinct request in dibs_answers, keyed by its digest,
// {request, answer}, stamped when kept.
#include "open_answer_store.hpp"

namespace dibs {

const record_kind answers_kind{"dibs_answers", "digest", {}, {"request", "answer"}, "stored_at"};

namespace {
class record_answers final : public answer_store {
 public:
  explicit record_answers(std::shared_ptr<record_table> t) : table_(std::move(t)) {}

  std::optional<kept_answer> find(const answer_key& k, std::chrono::milliseconds ttl) override {
    const auto seen = table_->read(k.digest);
    if (!seen.record || seen.record->texts.size() < 2 || seen.record->age >= ttl) return std::nullopt;
    return kept_answer{seen.record->texts[1], std::chrono::duration_cast<std::chrono::milliseconds>(seen.record->age)};
  }

  void keep(const std::vector<std::pair<answer_key, std::string>>& answers) override {
    if (answers.empty()) return;
    std::vector<own_record> records;
    for (const auto& [k, answer] : answers) records.push_back({k.digest, {}, {k.request, answer}, {}});
    // A record too large for any statement is not kept: the API is asked again next time.
    table_->put(records);
  }

 private:
  std::shared_ptr<record_table> table_;
};
}  // namespace

std::shared_ptr<answer_store> open_answer_store(const std::shared_ptr<admin_store>& st) {
  const auto records = std::dynamic_pointer_cast<own_records>(st);
  return records ? std::make_shared<record_answers>(records->open_records(answers_kind)) : nullptr;
}

}  // namespace dibs
