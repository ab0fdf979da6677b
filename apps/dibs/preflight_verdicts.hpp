// What `dibs enrich`'s pre-flight makes of what it saw, decided without a store or a network:
// whether a sampled pending item has the field the --url template names, what each request's
// answer means, and what the answers for a few items say together. Pure; tested in
// tests/unit/test_preflight_verdicts.cpp.
//
// One request's answer:
//   2xx with the kind of body the run    the API is there: go
//   expects (a JSON object; a batch:
//   a JSON array)
//   2xx with any other body              refuse: every item would be charged and fail (an HTML
//                                        page behind a 200: a wrong host or path, a login page)
//   404, 405, 410 with a JSON body       the API's own "not found" for this one key: ask another item
//   404, 405, 410 with anything else     a web server's page: a wrong path? ask another item
//   400, 413, 415, 422 and the other 4xx the API rejects the request as the run builds it (a body,
//   (not 408, 429)                       a header, a URL it can't take), or this one item's: ask
//                                        another item; rejected for every item asked, refuse
//                                        with the API's words (every row would be charged and fail)
//   408, 429                             the API is there: go (it asks to slow down)
//   5xx                                  the API is there, and failed for this one item, or is
//                                        down for now: go, with a warning. One item's 500 (an API
//                                        bug that some keys meet) must not refuse a whole run; an
//                                        outage is the run's breaker's to wait out, at no attempt
//   a reset or broken exchange           try again (up to `max_tries` in all), then refuse
//   refused, unresolvable, timed out     refuse at once: every item would wait for an API that is
//                                        not there (another try costs a whole timeout)
//   3xx                                  refuse: redirects are not followed, every item would fail
//   401, 403                             refuse: the API refuses this client (a key?), for every item
// Several items' answers (judge_probes): any refusal refuses; any answer that goes, goes (the
// "not found"s were about their own keys). When every pending item asked is "not found" (after
// `dibs retry --reason 'HTTP 404'`, every pending item may be a real one), an item already done is
// asked: answered, the path is right and the run goes on; "not found" too, or no item done yet to
// ask, it is almost certainly a wrong path (an API's 404 may be JSON, a wrong route's too). When
// every pending item asked is rejected (a 400 ...), the run is refused, unless an item already
// done is answered (then the rejections were those items' own).
#pragma once

#include <dibs/http/client.hpp>

#include <dibs/admin_store.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dibs::cli {

// "" when `sample` has `field`, else the one line that says which field, which item, what the
// item has, and the nearest of its names. A field that is there but NULL (an SQL column) or not a
// string is no refusal: it is that one item's problem, not the template's.
std::string missing_field_refusal(const std::string& field, const pending_sample& sample, const std::string& flag);

struct probe_verdict {
  // not_found: a 404/405/410 with a JSON body (the API's); not_found_page: one with any other body;
  // rejected: another 4xx (but 408, 429): the request as built, or this item's.
  enum class kind { go, again, refuse, not_found, not_found_page, rejected } what = kind::go;
  std::string why;  // for again and refuse (and a go with a warning, a not found): what the API answered, in words
  bool account_spent = false;  // refuse: the account can make no more calls (no run can go)
};

// What a 2xx answer must be: one item's (a JSON object), ip-api's batch (a JSON array), a batch
// template's (either: an OpenAI list object, a text-embeddings-inference array).
enum class probe_answer { object, array, json };

// `tries`: the requests sent so far, this one included.
probe_verdict judge_probe(const http::response& r, int tries, int max_tries, probe_answer expected = probe_answer::object);

// Whether the pre-flight asks another item: none of `probes` decided yet (each a "not found").
bool ask_another(const std::vector<probe_verdict>& probes);
bool not_found(const probe_verdict& v);

struct preflight_decision {
  bool refuse = false;
  std::string why;      // a refusal's reason, or a warning for a run that goes on ("" for none)
};
// What the answers for the pending items asked say together (in the order asked), with the
// answer for an item already done (`done`) when one was asked.
preflight_decision judge_probes(const std::vector<probe_verdict>& probes,
                                const std::optional<probe_verdict>& done = std::nullopt);

}  // namespace dibs::cli
