#include "preflight.hpp"

#include "adapters/http/processor/call_span.hpp"

#include "preflight_verdicts.hpp"

#include "adapters/http/processor/batch_answer.hpp"
#include "adapters/http/budget/call_budget.hpp"
#include "adapters/http/processor/prefetched_answers.hpp"
#include "adapters/http/processor/request_builder.hpp"
#include <dibs/http/exchange_policy.hpp>

#include <dibs/log.hpp>
#include "engine/src/uri_redact.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace dibs::cli {

namespace {
constexpr int max_tries = 3;  // a broken exchange is tried this often in all
constexpr std::size_t max_items = 3;  // the items asked, while each answer is a "not found"

// The URL as sent, its secrets masked (an API key in the query).
std::string shown_url(const http::url_template& t, const std::string& target) { return http::redacted_url(t, target); }

http::response send_once(const http::processor_options& call, const http::request& req) {
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), call.http);
  auto fut = net::co_spawn(ioc, c.send(call.url.origin(), req), net::use_future);
  ioc.run();
  return fut.get();
}
}  // namespace

namespace {
// The item as the run would claim it: its source field and the others it brings.
job job_of(const pending_sample& sample, const std::string& field) {
  job j;
  j.id = sample.id;
  j.fields.push_back(sample.source);
  j.fields.back().name = field;
  j.fields.insert(j.fields.end(), sample.more.begin(), sample.more.end());
  return j;
}

// The request the run would send for `sample`; nullopt (with a warning said) when none can be made.
std::optional<http::request> request_for(const pending_sample& sample, const http::processor_options& call, bool batch,
                                         const std::string& field) {
  if (batch) {
    if (sample.source.value.size() > call.url.max_value_bytes()) {
      log::warn("pre-flight: pending item ", sample.id, "'s '", field, "' is ", sample.source.value.size(),
                " bytes long, more than --max-source-bytes ", call.url.max_value_bytes(), "; the API was not tried");
      return std::nullopt;
    }
    auto req = http::build_request(call.url, call.shape, job{}).req;  // a fixed URL, fixed headers
    req.method = http::request::verb::post;
    req.body = http::batch_request_body({sample.source.value});
    return req;
  }
  auto built = http::build_request(call.url, call.shape, job_of(sample, field));
  if (!built.error.empty()) {
    log::warn("pre-flight: pending item ", sample.id, ": ", built.error, "; the API was not tried");
    return std::nullopt;
  }
  return std::move(built.req);
}

// One item's request, sent until its answer says something (a broken exchange is tried again);
// nullopt when a call budget has no call left for it (the API was not tried). A 2xx answer is
// left in `answered` (the run uses it for its item: it is paid for).
std::optional<probe_verdict> probe(const http::processor_options& call, const http::request& req, bool batch,
                                   const std::string& flag, std::string& shown, http::response* answered = nullptr) {
  shown = shown_url(call.url, req.target);
  const auto& host = call.url.host();
  // The pre-flight's call is one of the budget's too (--max-calls, --budget).
  std::size_t reserved = 0;
  struct give_back {
    const std::vector<std::shared_ptr<http::call_budget>>& budgets;
    std::size_t& n;
    ~give_back() {
      for (std::size_t i = 0; i < n; ++i) budgets[i]->ended(1);
    }
  } reservations{call.budgets, reserved};
  for (const auto& b : call.budgets) {
    if (b->reserve_blocking(1) == 0) {
      log::info("pre-flight: ", b->what(), " has no call left; the API was not tried");
      return std::nullopt;
    }
    ++reserved;
  }
  for (int tries = 1;; ++tries) {
    // One slot of --rate, like any request of the run: the limit holds with the pre-flight in it.
    std::this_thread::sleep_until(call.limiter->reserve(host));
    for (const auto& b : call.budgets) b->called();
    const auto sent = std::chrono::steady_clock::now();
    auto r = send_once(call, req);
    honor_stop_signals(*call.limiter, host, r, call.max_retry_after, nullptr, false, sent);  // a 429's pause holds for the run
    if (!r.ec && call.no_data.by_status(r.status)) {  // the API's "no data for this key": it answers
      log::info("pre-flight: ", flag, " ", shown, " answered HTTP ", r.status, ", no data for this item (--no-data-on)");
      return probe_verdict{};
    }
    // Under a budget the pre-flight's one reserved call is its only try.
    auto v = judge_probe(r, tries, call.budgets.empty() ? max_tries : 1, batch);
    if (v.what == probe_verdict::kind::again) {
      log::warn("pre-flight: ", shown, ": ", v.why, "; trying again");
      std::this_thread::sleep_for(std::chrono::milliseconds(500) * tries);
      continue;
    }
    if (v.what == probe_verdict::kind::refuse && tries > 1) v.why += " (" + std::to_string(tries) + " tries)";
    if (v.what == probe_verdict::kind::go && v.why.empty())
      log::info("pre-flight: ", flag, " ", shown, " answered ", r.ec ? r.describe() : "HTTP " + std::to_string(r.status));
    if (answered && !r.ec && r.status >= 200 && r.status < 300) *answered = std::move(r);
    return v;
  }
}
}  // namespace

void run_preflight(admin_store& st, const http::processor_options& call, bool batch, const std::string& field,
                   const std::string& flag) {
  // A few items: one answer of "not found" may be about its own key, and is asked again of others.
  const auto samples = st.sample_pending_items(max_items);
  if (samples.empty()) {
    log::info("pre-flight: nothing pending, nothing to check");
    return;
  }
  if (auto refusal = missing_field_refusal(field, samples.front(), flag); !refusal.empty())
    throw std::invalid_argument(refusal + " (--no-preflight skips this check)");
  std::vector<probe_verdict> verdicts;
  std::optional<probe_verdict> done;
  std::string shown;
  for (const auto& sample : samples) {
    if (!verdicts.empty() && !ask_another(verdicts)) break;
    if (sample.source.st != job_field::state::string || sample.source.value.empty()) {
      if (verdicts.empty()) log::warn("pre-flight: pending item ", sample.id, " has no text in '", field, "'; the API was not tried");
      continue;
    }
    const auto req = request_for(sample, call, batch, field);
    if (!req) continue;
    http::response answered;
    auto v = probe(call, *req, batch, flag, shown, &answered);
    if (!v) break;  // no call left to ask with
    // Paid for: the run takes it for this item rather than asking again (a batch's is no item's).
    if (answered.status != 0 && !batch && call.prefetched)
      call.prefetched->keep(http::request_identity(call.url, call.shape, job_of(sample, field)), std::move(answered));
    verdicts.push_back(std::move(*v));
    if (batch) break;  // a batch asks the same fixed URL: one request tells it all
    // "Not found": an item already done (the path worked for it) tells a wrong path from items
    // the API has nothing for; without one, other pending items are asked.
    if (ask_another(verdicts) && verdicts.size() == 1)
      if (const auto finished = st.sample_done(); finished && finished->source.st == job_field::state::string)
        if (const auto again = request_for(*finished, call, batch, field)) {
          std::string shown_done;
          done = probe(call, *again, batch, flag, shown_done);  // nullopt: no call left to ask it
          break;
        }
  }
  if (verdicts.empty()) return;
  const auto decision = judge_probes(verdicts, done);
  if (decision.refuse)
    throw std::invalid_argument("the API can't be used: " + flag + " " + shown + ": " + decision.why +
                                " (--no-preflight skips this check)");
  if (!decision.why.empty()) log::warn("pre-flight: ", flag, " ", shown, " answered ", decision.why);
}

}  // namespace dibs::cli
