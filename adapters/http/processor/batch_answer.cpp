#include "batch_answer.hpp"

#include "engine/src/json_text.hpp"

#include "profiles/ipapi/ipapi_profile.hpp"
#include "json_check.hpp"

namespace dibs::http {

std::string batch_request_body(const std::vector<std::string>& keys) {
  std::string out = "[";
  for (const auto& k : keys) {
    if (out.size() > 1) out += ',';
    append_json_string(out, k);
  }
  return out + "]";
}

batch_split split_batch_answer(simdjson::ondemand::parser& outer, simdjson::ondemand::parser& inner,
                               std::string_view body, const std::vector<std::string>& keys, bool status_check) {
  namespace od = simdjson::ondemand;
  batch_split out;
  auto invalid = [&](simdjson::error_code e) {
    out.items.clear();
    out.error = std::string("the batch answer is not valid JSON: ") + simdjson::error_message(e);
    return out;
  };
  // All of it must be valid JSON before any element is believed: the on-demand walk skips the
  // inside of elements, so one malformed element could hide a shifted structure (fuzzing found
  // `[{...},{"message":"x":"y"}]` split into two plausible items).
  thread_local simdjson::dom::parser validator;
  simdjson::dom::element whole;
  if (auto e = validator.parse(body.data(), body.size()).get(whole)) return invalid(e);
  const simdjson::padded_string padded(body);
  od::document doc;
  if (auto e = outer.iterate(padded).get(doc)) return invalid(e);
  od::json_type type;
  if (auto e = doc.type().get(type)) return invalid(e);
  od::array answers;
  if (type != od::json_type::array) {
    out.error = "the batch answer is not a JSON array";
    return out;
  }
  if (auto e = doc.get_array().get(answers)) return invalid(e);
  std::size_t count = 0;
  if (auto e = answers.count_elements().get(count)) return invalid(e);
  if (count != keys.size()) {
    out.out_of_step = true;
    out.error = "the batch answer has " + std::to_string(count) + " elements for " + std::to_string(keys.size()) + " keys";
    return out;
  }
  out.items.reserve(keys.size());
  std::size_t i = 0;
  for (auto element : answers) {
    const auto& key = keys[i++];
    auto& v = out.items.emplace_back();
    od::value value;
    if (auto e = element.get(value)) return invalid(e);
    od::json_type t;
    if (auto e = value.type().get(t)) return invalid(e);
    od::object obj;
    std::string_view raw;
    if (t != od::json_type::object || value.get_object().get(obj) || obj.raw_json().get(raw)) {
      v.text = "the batch answer for '" + key + "' is not a JSON object";
      continue;
    }
    std::string text(raw);
    auto check = check_json_object(inner, text, 64, ipapi::members());
    if (!check.ok) {
      v.text = "the batch answer for '" + key + "' is bad: " + check.error;
      continue;
    }
    if (const auto answered = ipapi::answered_key(check); !answered.empty() && answered != key) {
      v.text = "the batch answer in the place of '" + key + "' is for '" + std::string(answered) + "'";
      out.out_of_step = true;
      continue;
    }
    compact_json_in_place(text);  // a pretty-printed answer, stored as one line
    if (auto no_data = status_check ? ipapi::no_data_reason(check) : std::nullopt) {
      v.k = batch_item_verdict::kind::no_data;
      v.text = std::move(*no_data);
      v.answer = std::move(text);
      continue;
    }
    v.k = batch_item_verdict::kind::done;
    v.text = std::move(text);
  }
  const char* trailing = nullptr;
  if (doc.current_location().get(trailing) == simdjson::SUCCESS) {
    out.items.clear();
    out.error = "the batch answer is not valid JSON: content after the array";
  }
  return out;
}

}  // namespace dibs::http
