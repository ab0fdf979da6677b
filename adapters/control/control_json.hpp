// What the engine's HTTP controls (control_server.hpp) read and write for the workers, the live
// changes and the failures, as pure functions (unit-tested without a server):
//   the bodies of POST /release, /concurrency, /rate, /retry, each checked with a message that
//   names the field; and the JSON of GET /workers and of what GET /status adds to the engine's
//   counters (dibs/metrics_text.hpp).
#pragma once

#include <dibs/admin_store.hpp>
#include <dibs/engine.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::http {

// A request body read: the value, or why it can't be (error non-empty, the answer is a 400).
template <class T>
struct parsed_body {
  std::optional<T> value;
  std::string error;
};

// {"worker":"NAME"}: a worker id (dibs/worker_id.hpp's rules).
parsed_body<std::string> release_body(const std::string& body);
// {"concurrency":N}: 1 to 1,000,000.
parsed_body<std::size_t> concurrency_body(const std::string& body);
// {"rate":"45/min"} (as the rate setting takes it), {"rate":0.75} (per second), or {"rate":null} (no
// limit): requests per second, 0 for none.
parsed_body<double> rate_body(const std::string& body);
// {"reason":"text"}: the failures whose reason contains it ({} or {"reason":""}: every failure);
// {"reason_is":"text"}: those whose reason is that text, the group /status counted (the
// dashboard's "Retry these").
parsed_body<retry_filter> retry_body(const std::string& body);

// A number as JSON: null when it is not finite.
std::string json_number(double v);

// How long since a lease holder last took or renewed a lease, estimated with this process's lease
// length (`lease`) from its latest until: lease - (latest until - now), at least 0. A live
// worker's stays under the lease (it renews every half lease); a dead worker's grows without
// bound. (Not from the earliest until: an item given back for a retry keeps its worker's name
// with the retry time as its until, and once that time has passed it would make a live worker's
// "oldest lease" older than a lease.)
double renewed_s_ago(const lease_holder& h, std::chrono::milliseconds lease);

// A lease holder as the operator should read it: "live" when this process is it or its leases are
// renewed (leases_renewed), else "stale" (dead, stalled or cut off from the store: releasing
// it is safe). A live holder's passed untils are items it gave back for a retry that is due now
// (`retry_due`), not expired leases; a stale holder's are `expired`.
struct holder_state {
  bool live = false;
  std::uint64_t expired = 0;
  std::uint64_t retry_due = 0;
};
holder_state read_holder(const lease_holder& h, bool this_process);

// GET /workers:
// {"worker_id":..,"lease_s":..,"this_process":[{"by","in_flight","held","concurrency","breaker"}],
//  "store_available":bool,"store":[{"by","state":"live"|"stale","leased","expired","retry_due",
//  "earliest_until_s","latest_until_s","renewed_s_ago","this_process"}],
//  "store_error":".." (when the store could not be read)}
std::string workers_json(const std::string& worker_id, std::chrono::milliseconds lease, const std::vector<shard_view>& shards,
                         bool store_available, const std::optional<std::vector<lease_holder>>& holders,
                         const std::string& store_error);

// The process-wide API breaker from the shards': open if any is open, else probing if any is,
// else closed; the reason of the first shard not closed (else the first one's last reason).
struct breaker_summary {
  std::string state = "closed";
  std::string reason;
};
breaker_summary summarize_breakers(const std::vector<shard_view>& shards);

// What GET /status adds, as members to splice into its object (a leading comma included):
// "worker_id","concurrency","rate_per_second","rate_adjustable","breaker":{"state","reason"},
// "operator_released", and "failure_reasons":[{"reason","count","example_ids"}] when known.
std::string status_extras_json(const engine& e, const std::optional<std::vector<failure_reason>>& reasons,
                               std::uint64_t operator_released);
// `object` (a JSON object) with `members` spliced in before its closing brace.
std::string with_members(std::string object, const std::string& members);

struct http_figures;
// What GET /status adds where the run calls an HTTP API (a leading comma included):
// ,"http":{"requests","no_answer","throttled","api_stops"}.
std::string http_members_json(const http_figures& h);

}  // namespace dibs::http
