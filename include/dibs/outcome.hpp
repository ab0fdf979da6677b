// What a processor decided for one job.
#pragma once

#include <dibs/tracing.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

struct outcome {
  enum class kind { done, retry, fail };

  kind k = kind::fail;
  std::string result;  // done: the JSON object to store in the target field
  std::chrono::milliseconds after{0};  // retry: not before this delay
  std::string why;     // retry/fail: a human-readable reason
  int http_status = 0; // the last HTTP status seen, 0 when none
  // retry: the call failed for a reason about the API as a whole, not this item (refused,
  // unresolvable, timed out, 5xx). The engine's circuit breaker counts these; while it is open
  // such items wait under their leases and spend no attempt.
  bool api_down = false;
  // Another call's outcome: a reused answer, or the call this item joined (answer reuse,
  // adapters/http/reuse/answer_reuse.hpp). It is no news of the API: the circuit breaker neither
  // counts it as a failure nor closes on it.
  bool shared = false;
  // The processor decided without calling the API (the item's request could not be built from its
  // fields): no news of the API either, so the breaker neither counts it nor closes on it.
  bool local = false;
  // done: the answer is the API's definitive "no data for this key" (ip-api's
  // {"status":"fail","message":"private range"}): written as the item's answer, so the item is
  // done and never asked again, and counted apart from the items that got data (`no_data` in the
  // summary, /metrics, /status). Not a failure: a run whose only other items got no data exits 0.
  bool no_data = false;
  // The call was never sent: a budget had no call left for it (see budget_gate). The item goes
  // back as it was, no attempt spent (as at a shutdown), and nothing is learnt of the API.
  bool unsent = false;
  // retry: the API asked for a pause (a 429, Anthropic's 529 "overloaded"): its pace, not this
  // item's fault. The item goes back to wait with its attempt given back, so max_attempts counts
  // the item's own failures only.
  bool paced = false;
  // The processor's spans of this item (its API call), children of the job's trace.span; made
  // only when the job's trace is valid (the run traces). The engine exports them with the item's.
  std::vector<span_record> spans;

  static outcome done(std::string json) {
    outcome o;
    o.k = kind::done;
    o.result = std::move(json);
    return o;
  }
  // The API's definitive "no data" (see no_data), `why` its words.
  static outcome no_data_answer(std::string json, std::string why, int status = 0) {
    outcome o = done(std::move(json));
    o.no_data = true;
    o.why = std::move(why);
    o.http_status = status;
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
  // A retry because the API asked for a pause (see paced).
  static outcome paced_retry(std::chrono::milliseconds after, std::string why, int status) {
    outcome o = retry(after, std::move(why), status);
    o.paced = true;
    return o;
  }
  // A retry for an API-level reason (see api_down).
  static outcome unavailable(std::chrono::milliseconds after, std::string why, int status = 0) {
    outcome o = retry(after, std::move(why), status);
    o.api_down = true;
    return o;
  }
  static outcome fail(std::string why, int status = 0) {
    outcome o;
    o.k = kind::fail;
    o.why = std::move(why);
    o.http_status = status;
    return o;
  }
  // Given back without a call (see unsent), `why` said in the log.
  static outcome not_sent(std::string why) {
    outcome o = retry(std::chrono::milliseconds{0}, std::move(why));
    o.local = true;
    o.unsent = true;
    return o;
  }
  // A failure decided without a call (see local).
  static outcome invalid(std::string why) {
    outcome o = fail(std::move(why));
    o.local = true;
    return o;
  }
};

}  // namespace dibs
