#include <dibs/metrics_text.hpp>
#include <dibs/prometheus_writer.hpp>

#include <cstdio>

namespace dibs {

namespace {
std::string number(double v) { return prometheus_writer::number(v); }
}  // namespace

std::string prometheus_text(const engine& e, const std::optional<store_stats>& store) {
  const auto& c = e.figures();
  prometheus_writer w;
  w.counter("dibs_claimed_total", "Items claimed.", load(c.claimed));
  w.counter("dibs_completed_total", "Items done: result written under the lease.", load(c.completed));
  w.counter("dibs_failed_total", "Items failed, with their reason.", load(c.failed));
  w.counter("dibs_no_data_total", "Items done with the API's definitive 'no data' answer (written as the result; not failed).",
            load(c.no_data));
  w.counter("dibs_lost_leases_total", "Results discarded because the lease was lost.", load(c.lost_leases));
  w.counter("dibs_released_total", "Items given back at shutdown or pause.", load(c.released));
  w.counter("dibs_retries_total", "Items given back with a delay, to be tried again.", load(c.retries));
  w.counter("dibs_renewals_total", "Lease renewals.", load(c.renewals));
  w.counter("dibs_abandoned_total", "Calls cancelled at the max processing time.", load(c.abandoned));
  w.counter("dibs_store_errors_total", "Store operations that failed (and were retried).", load(c.store_errors));
  w.counter("dibs_claim_conflicts_total", "Claim candidates another worker took first.",
            static_cast<double>(e.the_store().claim_conflicts()));
  w.gauge("dibs_in_flight", "Items being processed now.", static_cast<double>(load(c.in_flight)));
  w.gauge("dibs_paused", "1 while the engine is paused.", e.paused() ? 1 : 0);
  w.counter("dibs_api_circuit_trips_total", "Times a shard found the API down and stopped sending.", load(c.circuit_trips));
  w.gauge("dibs_api_circuit_open", "Shards whose API circuit is open (nothing sent but probes).",
          static_cast<double>(load(c.circuit_open)));
  w.gauge("dibs_waiting_for_api", "Items kept under lease until the API answers again.",
          static_cast<double>(load(c.waiting_for_api)));
  w.counter("dibs_answer_calls_total", "Answer reuse: items whose request was sent (0 without answer reuse).",
            load(c.answer_calls));
  w.counter("dibs_answers_reused_total", "Answer reuse: items answered from the answer cache.", load(c.answers_reused));
  w.counter("dibs_answers_joined_total", "Answer reuse: items that joined the same request in flight.",
            load(c.answers_joined));
  w.counter("dibs_answers_from_store_total", "Answer reuse: of the reused, answers found in the store's dibs_answers.",
            load(c.answers_from_store));
  if (store) {
    w.gauge("dibs_pending", "Items waiting in the store.", static_cast<double>(store->pending));
    w.gauge("dibs_leased", "Items leased in the store (live or expired).",
            static_cast<double>(store->leased_live + store->leased_expired));
  }
  w.hist("dibs_claim_to_outcome_seconds", "From claim to done, retry or failure.", c.claim_to_outcome_s);
  w.hist("dibs_claim_batch_size", "Items per claim.", c.claim_batch_size);
  c.extras.prometheus(w);
  return w.take();
}

std::string status_json(const engine& e, const std::optional<store_stats>& store) {
  const auto& c = e.figures();
  auto field = [](const char* name, double v) { return std::string("\"") + name + "\":" + number(v); };
  std::string out = "{";
  out += field("claimed", load(c.claimed)) + "," + field("completed", load(c.completed)) + "," +
         field("failed", load(c.failed)) + "," + field("no_data", load(c.no_data)) + "," +
         field("lost_leases", load(c.lost_leases)) + "," +
         field("released", load(c.released)) + "," + field("retries", load(c.retries)) + "," +
         field("renewals", load(c.renewals)) + "," + field("in_flight", static_cast<double>(load(c.in_flight)));
  out += std::string(",\"paused\":") + (e.paused() ? "true" : "false");
  out += std::string(",\"api\":") + (load(c.circuit_open) > 0 ? "\"down\"" : "\"up\"") + "," +
         field("api_circuit_trips", load(c.circuit_trips)) + "," +
         field("waiting_for_api", static_cast<double>(load(c.waiting_for_api)));
  if (const auto calls = load(c.answer_calls), reused = load(c.answers_reused), joined = load(c.answers_joined);
      calls + reused + joined > 0)
    out += "," + field("api_calls", calls) + "," + field("answers_reused", reused) + "," +
           field("answers_joined", joined) + "," +
           field("answer_hit_ratio", static_cast<double>(reused + joined) / static_cast<double>(calls + reused + joined));
  out += std::string(",\"finished\":") + (e.finished() ? "true" : "false");
  if (store)
    out += "," + field("pending", static_cast<double>(store->pending)) + "," +
           field("leased", static_cast<double>(store->leased_live + store->leased_expired)) + "," +
           field("done", static_cast<double>(store->done)) + "," + field("store_failed", static_cast<double>(store->failed));
  return out + "}";
}

}  // namespace dibs
