// `dibs enrich`'s pre-flight, before the run starts: a pending item's fields checked against the
// template, then an item claimed (as the run claims) and its request sent to the API, so that a
// mistyped {field}, a closed port, a wrong host or path, a body the API rejects, or a page where
// the API's JSON should be stops the command with one line instead of failing (or parking, or
// charging) every item. When the answer is a "not found", another item or two is asked: a wrong
// path is not found for every item, a real "not found" for its own. The items asked are the run's
// first (preclaimed_store): their answers are written as any, never bought again, and no other
// process starting at the same moment asks for them. Refused, they are given back unprocessed
// (each claim counts among its item's --max-attempts, as any claim does).
// What the answers mean: preflight_verdicts.hpp. `--no-preflight` skips all of it.
#pragma once

#include <dibs/http/batch_body.hpp>
#include <dibs/http/http_processor.hpp>

#include <dibs/admin_store.hpp>

#include "api_flags.hpp"
#include "preclaimed_store.hpp"

#include <string>
#include <vector>

namespace dibs::cli {

// Throws std::invalid_argument (a start-up refusal, exit 2) with the one line that says why.
// `call`: the run's own (its limiter is the run's, so the request counts against --rate);
// `field`: what the store reads; `batch`: POST a one-key batch instead of a GET; `flag`: the
// URL's flag, for messages; `claim_as`: how the run claims (its worker, lease, grace, attempts);
// `into`: where the items asked go for the run; `figures`: the run's, where its calls (and their
// tokens) are counted with the run's own.
// A batch's pre-flight: the template's one-element body (ip-api's batch too: its profile).
struct preflight_batch {
  bool on = false;
  http::batch_body body;
  std::string item = "/{i}";  // where the template's answer holds each item's
  std::string echo;           // the member of an item's answer naming its key ("": none) ...
  std::string key_field;      // ... the key in this field
};
// The run's batch shape, as api_flags gives it to the processor (off without --batch-url).
preflight_batch preflight_batch_of(const api_flags& api, const std::string& source_field);

void run_preflight(admin_store& st, const http::processor_options& call, const preflight_batch& batch, const std::string& field,
                   const std::string& flag, const claim_request& claim_as, preclaimed_store& into,
                   counters* figures = nullptr);
// Items `into` still held when the run ended (it stopped before claiming them): given back.
void give_back_preclaimed(admin_store& st, const http::processor_options& call, const std::vector<job>& jobs);

}  // namespace dibs::cli
