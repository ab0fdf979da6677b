// `dibs enrich`'s pre-flight, before anything is claimed: one pending item read (not claimed),
// its field checked against the template, and one request to the API built from it, so that a
// mistyped {field}, a closed port or a wrong host stops the command with one line instead of
// failing (or parking) every item. The sample's answer is not written and spends no attempt.
// What the answers mean: preflight_verdicts.hpp. `--no-preflight` skips all of it.
#pragma once

#include <dibs/http/http_processor.hpp>

#include <dibs/admin_store.hpp>

#include <string>

namespace dibs::cli {

// Throws std::invalid_argument (a start-up refusal, exit 2) with the one line that says why.
// `call`: the run's own (its limiter is the run's, so the request counts against --rate);
// `field`: what the store reads; `batch`: POST a one-key batch instead of a GET; `flag`: the
// URL's flag, for messages.
void run_preflight(admin_store& st, const http::processor_options& call, bool batch, const std::string& field,
                   const std::string& flag);

}  // namespace dibs::cli
