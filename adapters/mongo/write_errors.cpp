#include "write_errors.hpp"
#include "primary_change.hpp"

#include <algorithm>
#include <unordered_set>

namespace dibs::mongo {

namespace {

// The codes a fenced update can be refused with for what it carries (the server does not always
// send codeName in a write error).
const char* known_code_name(std::int64_t code) {
  switch (code) {
    case 2: return "BadValue";
    case 14: return "TypeMismatch";
    case 28: return "PathNotViable";
    case 52: return "DollarPrefixedFieldName";
    case 66: return "ImmutableField";
    case 121: return "DocumentValidationFailure";
    case 10334: return "BSONObjectTooLarge";
    case 11000: return "DuplicateKey";
    case 17419: return "BSONObjectTooLarge";  // "Resulting document after update is larger than ..."
    default: return "";
  }
}

std::string relaxed_json(const bson_iter_t* it) {
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  bson_iter_document(it, &len, &data);
  bson_t sub;
  if (!bson_init_static(&sub, data, len)) return {};
  const bson_string s(bson_as_relaxed_extended_json(&sub, nullptr));
  return s ? std::string(s.get()) : std::string();
}

write_error read_one(bson_iter_t* entry) {
  write_error e;
  while (bson_iter_next(entry)) {
    const std::string key = bson_iter_key(entry);
    if (key == "index" && BSON_ITER_HOLDS_NUMBER(entry)) e.index = static_cast<std::size_t>(bson_iter_as_int64(entry));
    else if (key == "code" && BSON_ITER_HOLDS_NUMBER(entry)) e.code = bson_iter_as_int64(entry);
    else if (key == "codeName" && BSON_ITER_HOLDS_UTF8(entry)) e.code_name = bson_iter_utf8(entry, nullptr);
    else if (key == "errmsg" && BSON_ITER_HOLDS_UTF8(entry)) e.errmsg = bson_iter_utf8(entry, nullptr);
    else if (key == "errInfo" && BSON_ITER_HOLDS_DOCUMENT(entry)) e.details = relaxed_json(entry);
  }
  if (e.code_name.empty()) e.code_name = known_code_name(e.code);
  return e;
}

// Cuts `s` to at most `n` bytes without splitting a UTF-8 sequence.
std::string cut(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  std::size_t end = n;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

}  // namespace

std::vector<write_error> write_errors_of(const bson_t* reply) {
  std::vector<write_error> out;
  bson_iter_t it, arr;
  if (!reply || !bson_iter_init_find(&it, reply, "writeErrors") || !BSON_ITER_HOLDS_ARRAY(&it) ||
      !bson_iter_recurse(&it, &arr))
    return out;
  while (bson_iter_next(&arr)) {
    bson_iter_t entry;
    if (BSON_ITER_HOLDS_DOCUMENT(&arr) && bson_iter_recurse(&arr, &entry)) out.push_back(read_one(&entry));
  }
  return out;
}

std::string refusal_reason(const write_error& e, std::size_t max_len) {
  std::string out = "MongoDB refused the write: code " + std::to_string(e.code);
  if (!e.code_name.empty()) out += " (" + e.code_name + ")";
  if (!e.errmsg.empty()) out += ": " + e.errmsg;
  if (!e.details.empty()) out += "; details: " + e.details;
  if (out.size() > max_len) out = cut(out, max_len > 3 ? max_len - 3 : max_len) + "...";
  return out;
}

const write_error* bulk_verdict::refused_at(std::size_t index) const {
  auto it = std::find_if(refused.begin(), refused.end(), [&](const write_error& e) { return e.index == index; });
  return it == refused.end() ? nullptr : &*it;
}

bulk_verdict judge_bulk_reply(const bson_t* reply, bool executed, const std::string& error) {
  bulk_verdict v;
  bson_iter_t it;
  if (reply && bson_iter_init_find(&it, reply, "nMatched") && BSON_ITER_HOLDS_NUMBER(&it)) v.matched = bson_iter_as_int64(&it);
  if (reply && bson_iter_init_find(&it, reply, "nUpserted") && BSON_ITER_HOLDS_NUMBER(&it)) v.upserted = bson_iter_as_int64(&it);
  v.refused = write_errors_of(reply);
  // A primary changing refused nothing: the batch is tried again (the fence tells what landed).
  std::optional<std::string> changing;
  for (const auto& e : v.refused)
    if (primary_changing(e.code) && !changing) changing = "the primary is changing: " + refusal_reason(e, 200);
  v.refused.erase(std::remove_if(v.refused.begin(), v.refused.end(), [](const write_error& e) { return primary_changing(e.code); }),
                  v.refused.end());
  std::sort(v.refused.begin(), v.refused.end(), [](const write_error& a, const write_error& b) { return a.index < b.index; });
  bson_iter_t wc, first;
  const bool concern_failed = reply && bson_iter_init_find(&wc, reply, "writeConcernErrors") &&
                              BSON_ITER_HOLDS_ARRAY(&wc) && bson_iter_recurse(&wc, &first) && bson_iter_next(&first);
  if (!executed && (v.refused.empty() || concern_failed || changing))
    v.batch_error = changing ? *changing + " (" + error + ")" : error.empty() ? std::string("the bulk write failed") : error;
  return v;
}

std::optional<std::string> oversized_answer(std::size_t bson_bytes) {
  if (bson_bytes <= max_document_bytes) return std::nullopt;
  return "the answer is " + std::to_string(bson_bytes) + " bytes as BSON, over MongoDB's document limit of " +
         std::to_string(max_document_bytes) + " (BSONObjectTooLarge)";
}

std::vector<lease_ref> split_refused(const std::vector<lease_ref>& refs, const bulk_verdict& v, refusals& refused) {
  std::vector<lease_ref> kept;
  for (std::size_t k = 0; k < refs.size(); ++k) {
    if (const auto* e = v.refused_at(k)) refused.emplace_back(refs[k].id, refusal_reason(*e));
    else kept.push_back(refs[k]);
  }
  return kept;
}

std::vector<lease_ref> without_refused(const std::vector<lease_ref>& refs, const refusals& refused) {
  std::unordered_set<std::string> skip;
  for (const auto& r : refused) skip.insert(r.first);
  std::vector<lease_ref> out;
  for (const auto& r : refs)
    if (!skip.count(r.id)) out.push_back(r);
  return out;
}

}  // namespace dibs::mongo
