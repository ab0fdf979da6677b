// The built-in processor: call the URL template expanded with the job's fields (a GET, or the
// method, headers and body of `shape`: request_shape.hpp), accept a 2xx body that is one JSON
// object, and keep it as the result.
//
// Before each request the processor waits for its slot from the shared rate limiter (holding
// its pipeline); after each response it tells the limiter when the API said stop. With a
// `work_started` hook (the engine's, through the factory) the max_processing clock starts when
// the request is sent, not while it waits for its slot.
//
// With `reuse` (answer_reuse.hpp), documents whose request is identical share one call.
//
// Outcomes: a missing or non-string field, an oversized body and a 4xx other than 408/429 fail
// the item. An API that answers {"status":"fail"} (ip-api's way to say "no data for this key":
// ipapi_profile.hpp) ends it with that answer, counted as no data (or failed: no_data_fails).
// Refused or reset connections, timeouts, 408, 429, 5xx and invalid JSON are retried with
// exponential backoff and full jitter; the engine fails the item once max_attempts is reached.
#pragma once

#include <dibs/http/adaptive_limit.hpp>
#include <dibs/http/answer_map.hpp>
#include <dibs/http/client.hpp>
#include <dibs/http/exchange_policy.hpp>
#include <dibs/http/json_pointer.hpp>
#include <dibs/http/no_data_rules.hpp>
#include <dibs/http/rate_limiter.hpp>
#include <dibs/http/request_shape.hpp>
#include <dibs/http/url_template.hpp>

#include <dibs/processor.hpp>
#include <dibs/tracing.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

namespace dibs::http {

class answer_reuse;        // answer_reuse.hpp (internal): made by whoever turns reuse on
class call_budget;         // call_budget.hpp (internal): made by whoever sets a budget
class spend_budget;        // spend_budget.hpp (internal): a budget of money
class prefetched_answers;  // prefetched_answers.hpp (internal): filled by the pre-flight
struct json_check_result;  // json_check.hpp (internal)

struct processor_options {
  url_template url;
  // The method, headers and body (request_shape.hpp); by default a GET of the URL alone.
  request_shape shape;
  client_options http;
  // Read answers with ip-api's profile (ipapi_profile.hpp): a top-level "status":"fail" is the
  // API's definitive "no data for this key" (outcome::no_data): written as the item's answer and
  // counted apart, or, with no_data_fails (no_data_fails), the item fails with its "message".
  // Off (no_status_check): every valid answer is data.
  bool status_field_check = true;
  bool no_data_fails = false;
  // Called (from any shard's thread, maybe more than once) when an answer says the account can
  // make no more calls (api_body.hpp's account_spent_code: a quota or spend cap spent), with the
  // API's words; returns true when the run stops for it. The item that heard it then goes back,
  // its attempt given back. Empty, or false: such an answer is an item's failure, as any 4xx.
  std::function<bool(const std::string& why)> account_spent;
  // Any API's way to say "no data" (no_data_rules.hpp): a status (no_data_on 404), a member's
  // value (no_data_when /status=fail); counted and written as ip-api's are (no_data_fails too).
  no_data_rules no_data;
  // What a token costs, input and output (price; 0: not given): the run's cost in the summary,
  // /status and /metrics, from the answers' usage.
  struct token_prices {
    double input = 0;
    double output = 0;
  } price;
  // An LLM's answer: the member at this pointer (a string holding JSON, as chat content does) must
  // parse as JSON, or the item fails with that reason and nothing is written (expect_json).
  std::optional<json_pointer> expect_json;
  // map: the answer's members written as one object of the mapped values (answer_map.hpp);
  // empty: the whole answer.
  answer_map map;
  std::chrono::milliseconds backoff_base{500};
  std::chrono::milliseconds backoff_max{30'000};
  // The longest wait an API's Retry-After or X-Ttl is honored for (`max_retry_after`).
  std::chrono::milliseconds max_retry_after{3'600'000};
  // Shared by every shard: `rate`, and the API's own stop signals. The factory makes one
  // (with no rate of its own) when none is given, so stop signals are always honored.
  std::shared_ptr<rate_limiter> limiter;
  // `reuse_answers`: documents whose request is identical share one call (answer_reuse.hpp);
  // shared by every shard. Null: every document makes its own call.
  std::shared_ptr<answer_reuse> reuse;
  // max_calls, budget: each call sent is counted in each (call_budget.hpp); the store's
  // claims go through budget_gate so that no item is claimed without a call left for it.
  std::vector<std::shared_ptr<call_budget>> budgets;
  // budget in money (50USD/day): each request takes the most it can cost at `price` before it
  // goes, and its answer gives back what it did not cost (spend_budget.hpp); none left: not sent.
  std::vector<std::shared_ptr<spend_budget>> spend_budgets;
  // Answers bought before the run (the pre-flight's), each used for its item instead of a call.
  std::shared_ptr<prefetched_answers> prefetched;
  // `max_connections` for the whole process (0: none), split across its `shards` clients by
  // the factories (connection_share).
  std::size_t max_connections = 0;
  std::size_t shards = 1;
  // The adaptive limit on requests in flight to the API (adaptive_limit.hpp), on by default: the
  // engine's concurrency is then its ceiling. nullopt: every pipeline sends at once, a fixed
  // concurrency (fixed_concurrency).
  std::optional<adaptive_settings> adaptive = adaptive_settings{};
  // In a traced run (job::trace valid), each call carries a W3C `traceparent` header naming its
  // span of the item's trace, so an API that traces joins it. Off: no header (the span is kept).
  bool traceparent = true;
};

// `o` with the HTTP client's connection limit set to shard `index`'s share of max_connections.
std::shared_ptr<const processor_options> for_shard(std::shared_ptr<const processor_options> o, std::size_t index);

// What one shard's processor adds to the options: its place among the shards, the most its
// adaptive limit may reach, and whom to tell when that limit changes (shard_info's).
struct shard_place {
  std::size_t index = 0;
  std::size_t count = 1;    // the shards sharing each origin's limit
  std::size_t ceiling = 0;  // this shard's share of the concurrency; 0: the adaptive settings' own max
  std::size_t whole = 0;    // the engine's whole concurrency: each origin's ceiling (0: ceiling x count)
  std::function<void()> capacity_changed;
};
shard_place place_of(const shard_info& s);

// The HTTP client's options for one shard's processor: `o.http` with the adaptive limit (if on),
// published in `figures` (may be null).
client_options shard_client_options(const processor_options& o, http_figures* figures, const shard_place& place);

class http_processor final : public processor {
 public:
  // `figures`: the engine's; API answers and latencies are counted in its http_figures (may be null). `work_started`: called
  // with the job right before its request is sent (shard_info::work_started); may be empty.
  http_processor(net::any_io_executor ex, std::shared_ptr<const processor_options> opts, counters* figures = nullptr,
                 std::function<void(const job&)> work_started = {}, shard_place place = {});
  ~http_processor() override;

  awaitable<outcome> process(job j) override;
  bool reports_work_start() const override { return static_cast<bool>(work_started_); }
  // The adaptive limit on the API's requests, plus the items served without a call of their own
  // (answer reuse) now; 0 with a fixed concurrency.
  std::size_t capacity() const override;
  bool parked() const override { return client_.parked(origin_); }
  void set_ceiling(std::size_t ceiling) override { client_.set_ceiling(ceiling * shards_); }
  void concurrency_changed(std::size_t, std::size_t whole) override { client_.set_ceiling(whole); }
  void dispatch_ended() override { client_.leave(origin_); }

  client& http_client() { return client_; }
  const std::shared_ptr<rate_limiter>& limiter() const { return opts_->limiter; }

  // One call for `j` with `req` (built for it, or a fixed probe's), made as the run makes every
  // call: a slot of the rate, the call budgets counted when it goes out (as `j`'s, by its id and
  // token), the API's stop signals honoured for the whole run. The answer is not judged: the
  // pre-flight judges it by its own rules and hands it to the run. `refused`: a budget had no
  // call left, nothing was sent.
  struct asked {
    response r;
    bool refused = false;
    std::string too_large;  // not sent: why the request could never be admitted (its tokens)
  };
  awaitable<asked> ask(const job& j, request req);

 private:
  // A request sent as every call is (ask, call): `j`'s rate slot waited for, the budgets counted
  // as it goes out, the time it went. `refused`: a budget had no call left, nothing was sent.
  struct sent_call {
    response r;
    std::chrono::steady_clock::time_point sent;
    bool refused = false;
    std::string too_large;  // not sent: more tokens than the API's whole limit (why)
  };
  awaitable<sent_call> send_counted(const job& j, request req);
  // The call itself: a rate slot, the request, the judgement. `aborted` is set when it was
  // cancelled before an answer (its outcome then says nothing of the key).
  awaitable<outcome> call(const job& j, request req, bool& aborted);
  // With answer reuse: a cached answer, the same call in flight joined, or the call made and shared.
  awaitable<outcome> call_or_reuse(const job& j, request req);
  // Whether `key`, the key an answer says it is for, was asked for by `j`'s request.
  bool asked_for(const job& j, std::string_view key) const;
  // Classifies one HTTP exchange; a retry waits at least `stop_for` (the API's own stop signal).
  outcome judge(const job& j, response r, std::chrono::milliseconds stop_for, bool api_pace = false);
  // The JSON check of an answer, with ip-api's members captured when the status check is on; one
  // for the API's answers (judge) and the store's (acceptable).
  json_check_result check_body(std::string& body);
  // Whether this run would accept `body` as an answer (its size, the JSON check, ip-api's status).
  bool acceptable(std::string& body);  // reserves simdjson's padding in it
  // A traced job's call: its span id, the header that names it (traceparent), and its span once
  // answered (call_span.hpp).
  struct traced_call {
    span_id span{};
    const char* method = "GET";
    std::string url;  // redacted
  };
  traced_call begin_traced_call(const job& j, request& req);
  span_record end_traced_call(const job& j, traced_call& t, const response& r, std::chrono::steady_clock::time_point sent);
  // An answer another call got (the cache, the store's answers): done, or no data as judge() says.
  outcome reused_answer(std::string answer);
  // Why `body` (a JSON object, 2xx) is no answer to use: an LLM's answer cut at max_tokens,
  // refused or withheld (llm_answer.hpp), or not the JSON expect_json names; nullopt when usable.
  std::optional<std::string> llm_failure_in(const std::string& body);
  // Why `body` (a JSON object) means no data by the no-data rules' members; nullopt when it doesn't.
  std::optional<std::string> no_data_in(const std::string& body);
  // A done outcome's answer as the mapped values (map); any other outcome as it is.
  outcome mapped(outcome o);

  std::shared_ptr<const processor_options> opts_;
  http_figures* figures_;  // the run's, kept in the engine's counters (null without them)
  client client_;
  origin origin_;  // the API's (the URL template's)
  std::size_t shards_ = 1;      // the shards sharing each origin's limit
  std::size_t processing_ = 0;  // items in process()
  std::size_t calling_ = 0;     // ... of which in call(): waiting for a rate slot, or sent
  struct json_parser;  // simdjson's on-demand parser, reused for every body of this shard
  std::unique_ptr<json_parser> parser_;
  std::mt19937_64 rng_;
  net::any_io_executor ex_;  // the shard's: where a joined call's outcome is delivered
  counters* counters_;       // the engine's (may be null): answer reuse is counted there
  std::function<void(const job&)> work_started_;
};

processor_factory make_http_processor_factory(processor_options opts);

}  // namespace dibs::http
