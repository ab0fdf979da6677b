#include "pipeline_end.hpp"

#include <string>

namespace dibs {

pipeline_end pipeline_end_of(outcome o, bool aborted, bool abandoned, bool cancel_now,
                             std::chrono::milliseconds max_processing) {
  pipeline_end e;
  e.cancelled = aborted;
  // An abandoned or cancelled call tells nothing of the API, nor does one never sent (a budget had
  // no room for it): the breaker hears it as inconclusive, so if it was the probe another is due.
  e.api_answered = !aborted && !o.unsent;
  if (abandoned && o.k != outcome::kind::done) {
    // Past max_processing: retried like any failed call (and counted as an attempt), whether
    // the processor saw the cancellation or swallowed it.
    const auto after = o.k == outcome::kind::retry ? o.after : std::chrono::milliseconds{0};
    o = outcome::retry(after, "abandoned after max_processing " + std::to_string(max_processing.count()) + " ms");
    e.abandoned = true;
    e.api_answered = false;
    e.cancelled = false;
  }
  // A processor that swallowed the shard's cancellation reports an error outcome: that item is
  // released for another worker, not retried or failed on our account.
  if (cancel_now && o.k != outcome::kind::done) e.cancelled = true;
  e.o = std::move(o);
  return e;
}

}  // namespace dibs
