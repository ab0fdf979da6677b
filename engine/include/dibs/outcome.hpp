// What a processor decided for one job.
#pragma once

#include <chrono>
#include <string>
#include <utility>

namespace dibs {

struct outcome {
  enum class kind { done, retry, fail };

  kind k = kind::fail;
  std::string result;  // done: the JSON object to store in the target field
  std::chrono::milliseconds after{0};  // retry: not before this delay
  std::string why;     // retry/fail: a human-readable reason
  int http_status = 0; // the last HTTP status seen, 0 when none

  static outcome done(std::string json) {
    outcome o;
    o.k = kind::done;
    o.result = std::move(json);
    return o;
  }
  static outcome retry(std::chrono::milliseconds after, std::string why, int status = 0) {
    outcome o;
    o.k = kind::retry;
    o.after = after;
    o.why = std::move(why);
    o.http_status = status;
    return o;
  }
  static outcome fail(std::string why, int status = 0) {
    outcome o;
    o.k = kind::fail;
    o.why = std::move(why);
    o.http_status = status;
    return o;
  }
};

}  // namespace dibs
