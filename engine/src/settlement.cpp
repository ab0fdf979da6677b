#include "settlement.hpp"

#include "reason_text.hpp"

namespace dibs {

settlement settlement_of(const job& j, outcome o, bool cancelled, bool stopping, int max_attempts) {
  o.why = bounded_reason(std::move(o.why));
  settlement s;
  if (cancelled) {
    s.k = settlement::kind::give_back;
    // A call never sent (a budget had no room for it) gives the claim's attempt back: nothing
    // reached the API, whatever the run is doing.
    const bool unsent = o.unsent;
    s.write = release_item{j.ref(), millis{0}, (stopping && !unsent) || o.why.empty() ? "shutdown" : std::move(o.why), 0, true,
                           unsent};
    return s;
  }
  switch (o.k) {
    case outcome::kind::done:
      s.k = settlement::kind::complete;
      s.no_data = o.no_data;
      if (o.no_data) s.why = std::move(o.why);
      s.write = completion{j.ref(), std::move(o.result)};
      break;
    case outcome::kind::retry:
      if (o.paced) {  // the API's pace: back to wait, the claim's attempt given back
        s.k = settlement::kind::retry;
        s.write = release_item{j.ref(), o.after, std::move(o.why), o.http_status, false, true};
        break;
      }
      if (j.attempts >= max_attempts) {
        s.k = settlement::kind::give_up;
        s.write = failure{j.ref(), bounded_reason("gave up after " + std::to_string(j.attempts) + " attempts: " + o.why),
                          o.http_status, j.attempts};
      } else {
        s.k = settlement::kind::retry;
        s.write = release_item{j.ref(), o.after, std::move(o.why), o.http_status};
      }
      break;
    case outcome::kind::fail:
      s.k = settlement::kind::fail;
      s.write = failure{j.ref(), std::move(o.why), o.http_status, j.attempts};
      break;
  }
  return s;
}

}  // namespace dibs
