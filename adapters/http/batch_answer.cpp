#include "batch_answer.hpp"

namespace dibs::http {

namespace {
void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}
}  // namespace

std::string batch_request_body(const std::vector<std::string>& keys) {
  std::string out = "[";
  for (const auto& k : keys) {
    if (out.size() > 1) out += ',';
    append_json_string(out, k);
  }
  return out + "]";
}

batch_split split_batch_answer(simdjson::dom::parser& parser, std::string_view body,
                               const std::vector<std::string>& keys, bool status_check) {
  batch_split out;
  simdjson::dom::element doc;
  if (auto e = parser.parse(body.data(), body.size()).get(doc)) {
    out.error = std::string("the batch answer is not valid JSON: ") + simdjson::error_message(e);
    return out;
  }
  simdjson::dom::array answers;
  if (doc.get_array().get(answers)) {
    out.error = "the batch answer is not a JSON array";
    return out;
  }
  if (answers.size() != keys.size()) {
    out.error = "the batch answer has " + std::to_string(answers.size()) + " elements for " +
                std::to_string(keys.size()) + " keys";
    return out;
  }
  out.items.reserve(keys.size());
  std::size_t i = 0;
  for (auto answer : answers) {
    const auto& key = keys[i++];
    auto& v = out.items.emplace_back();
    simdjson::dom::object obj;
    if (answer.get_object().get(obj)) {
      v.text = "the batch answer for '" + key + "' is not a JSON object";
      continue;
    }
    std::string_view query;
    if (!obj["query"].get_string().get(query) && query != key) {
      v.text = "the batch answer in the place of '" + key + "' is for '" + std::string(query) + "'";
      continue;
    }
    std::string_view status;
    if (status_check && !obj["status"].get_string().get(status) && status == "fail") {
      std::string_view message;
      if (obj["message"].get_string().get(message)) message = {};
      v.k = batch_item_verdict::kind::no_data;
      v.text = "the API has no data: " + (message.empty() ? std::string("status fail") : std::string(message));
      continue;
    }
    v.k = batch_item_verdict::kind::done;
    v.text = simdjson::minify(obj);
  }
  return out;
}

}  // namespace dibs::http
