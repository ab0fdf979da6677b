// One item's request, built from the URL template and the request's shape (method, headers,
// body): pure, so the processor, the pre-flight and a dry run send (or show) the same bytes.
#pragma once

#include <dibs/http/client.hpp>
#include <dibs/http/request_shape.hpp>
#include <dibs/http/url_template.hpp>

#include <dibs/job.hpp>

#include <string>

namespace dibs::http {

struct built_request {
  request req;
  std::string error;  // empty when built: else which field could not be written, and why (the item fails)
};

// `shown`: secrets written as their placeholders ({env:NAME}) and every header value as
// "[redacted]": what a message may print, never sent.
built_request build_request(const url_template& url, const request_shape& shape, const job& j, bool shown = false);

// What makes the item's answer, for answer reuse and for the answers kept in the store
// (`reuse_answers store`): the method, the URL (with the value of a query parameter named like
// a key replaced by "***"), each header that reads the item's fields with its value, and the
// body, secrets written as their placeholders ({env:NAME}). It never holds a secret: a header's
// fixed value is left out (the same for every item, and where keys live: Authorization,
// X-Api-Key), and so is every {env:...} and {file:...} value, so a key rotated between runs
// still finds the answers kept. Empty when the request can't be built for the item.
std::string request_identity(const url_template& url, const request_shape& shape, const job& j);

// The request as a person reads it: "POST http://host:port/path", its header lines, a blank line,
// the body. Built with `shown`, it holds no secret.
std::string describe_request(const url_template& url, const request& r);

}  // namespace dibs::http
