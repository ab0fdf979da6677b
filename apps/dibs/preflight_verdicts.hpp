// What `dibs enrich`'s pre-flight makes of what it saw, decided without a store or a network:
// whether a sampled pending item has the field the --url template names, and what the one
// request's answer means. Pure; tested in tests/unit/test_preflight_verdicts.cpp.
//
// The request's answer:
//   2xx, 408, 429 and any other 4xx   the API is there: go (a 4xx may be about this one key)
//   5xx                               the API is there, and failed for this one item, or is
//                                     down for now: go, with a warning. One item's 500 (an API
//                                     bug that some keys meet) must not refuse a whole run; an
//                                     outage is the run's breaker's to wait out, at no attempt
//   a reset or broken exchange        try again (up to `max_tries` in all), then refuse
//   refused, unresolvable, timed out  refuse at once: every item would wait for an API that is
//                                     not there (another try costs a whole timeout)
//   3xx                               refuse: redirects are not followed, every item would fail
//   401, 403                          refuse: the API refuses this client (a key?), for every item
//   404, 405, 410                     refuse: almost certainly a wrong --url path
#pragma once

#include <dibs/http/client.hpp>

#include <dibs/admin_store.hpp>

#include <string>

namespace dibs::cli {

// "" when `sample` has `field`, else the one line that says which field, which item, what the
// item has, and the nearest of its names. A field that is there but NULL (an SQL column) or not a
// string is no refusal: it is that one item's problem, not the template's.
std::string missing_field_refusal(const std::string& field, const pending_sample& sample, const std::string& flag);

struct probe_verdict {
  enum class kind { go, again, refuse } what = kind::go;
  std::string why;  // for again and refuse (and a go with a warning): what the API answered, in words
};

// `tries`: the requests sent so far, this one included.
probe_verdict judge_probe(const http::response& r, int tries, int max_tries);

}  // namespace dibs::cli
