// `dibs enrich`'s pre-flight, before anything is claimed: a few pending items read (not claimed),
// the first's field checked against the template, and a request to the API for it, so that a
// mistyped {field}, a closed port, a wrong host or path, or a page where the API's JSON should be
// stops the command with one line instead of failing (or parking, or charging) every item. When
// the answer is a "not found", another item or two is asked: a wrong path is not found for every
// item, a real "not found" for its own. The samples' answers are not written and spend no attempt.
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
