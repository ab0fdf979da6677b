// The wire format of batch lookups (ip-api's `POST /batch`): the request body is a JSON array of
// keys; the answer is a JSON array of objects, one per key, in the same order, each naming its
// key in "query". Plain functions, so tests can inspect them without a server.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

// ["1.2.3.4","5.6.7.8"]
std::string batch_request_body(const std::vector<std::string>& keys);

struct batch_item_verdict {
  enum class kind { done, no_data, bad } k = kind::bad;
  std::string text;  // done: the item's JSON object; otherwise the reason
  std::string answer;  // no_data: the item's JSON object (kept as its answer unless no_data_fails)
};

struct batch_split {
  std::string error;                      // the answer as a whole is unusable (every item retries)
  std::vector<batch_item_verdict> items;  // one per key, when `error` is empty
  // The answer may be another request's: it has another number of elements than keys, or an
  // element names another key. Its connection may be one answer behind (client::drop_idle).
  bool out_of_step = false;
};

// Splits a 2xx answer to `keys`. Each object is kept as the API wrote it (byte for byte) after
// the same validation a single answer gets. An element that is not a valid object, or whose
// "query" names another key, is `bad` (retried); with `status_check`, "status":"fail" is
// `no_data` (the object, and its "message" as the reason). Those words are ip-api's: ipapi_profile.hpp. Two parsers: one walks the array, one checks elements.
batch_split split_batch_answer(simdjson::ondemand::parser& outer, simdjson::ondemand::parser& inner,
                               std::string_view body, const std::vector<std::string>& keys, bool status_check);

}  // namespace dibs::http
