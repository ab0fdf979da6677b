#include <dibs/http/http_processor.hpp>

#include "adapters/http/budget/budget_figures.hpp"
#include "adapters/http/reuse/answer_reuse.hpp"
#include "prefetched_answers.hpp"
#include "adapters/http/client/connection_slots.hpp"
#include "profiles/ipapi/ipapi_profile.hpp"
#include "api_body.hpp"
#include "json_check.hpp"
#include "answer_mapping.hpp"
#include "call_span.hpp"
#include "no_data_verdict.hpp"
#include "request_builder.hpp"
#include "spend_charge.hpp"
#include "adapters/http/budget/spend_budget.hpp"
#include "token_charge.hpp"
#include "llm_answer.hpp"

#include "engine/src/json_text.hpp"

#include <algorithm>

namespace dibs::http {

namespace {
// Every processor honors the API's stop signals, so it always has a limiter (without a rate).
std::shared_ptr<const processor_options> with_limiter(processor_options o) {
  o.limiter = std::make_shared<rate_limiter>();
  return std::make_shared<const processor_options>(std::move(o));
}
}  // namespace

struct http_processor::json_parser {
  simdjson::ondemand::parser parser;
  simdjson::dom::parser dom;  // for the no-data rules' members: used only when there are some
};

http_processor::http_processor(net::any_io_executor ex, std::shared_ptr<const processor_options> opts,
                               counters* figures, std::function<void(const job&)> work_started, shard_place place)
    : opts_(opts->limiter ? std::move(opts) : with_limiter(*opts)),
      figures_(figures ? &figures->extras.get<http_figures>() : nullptr),
      client_(ex, shard_client_options(*opts_, figures_, place)),
      origin_(opts_->url.origin()),
      shards_(std::max<std::size_t>(1, place.count)),
      parser_(std::make_unique<json_parser>()),
      rng_(std::random_device{}()),
      ex_(std::move(ex)),
      counters_(figures),
      work_started_(std::move(work_started)) {
  if (figures)
    for (const auto& b : opts_->budgets) figures->extras.get<budget_figures>().watch(b);
  if (figures_ && (opts_->price.input > 0 || opts_->price.output > 0)) {
    figures_->price_in.store(opts_->price.input, std::memory_order_relaxed);
    figures_->price_out.store(opts_->price.output, std::memory_order_relaxed);
  }
}

std::size_t http_processor::capacity() const {
  const auto limit = client_.limit(origin_);
  return limit == 0 ? 0 : limit + (processing_ - calling_);
}

namespace {
// Counts an item in (and out of) one of the processor's stages, however the coroutine ends.
struct counted {
  explicit counted(std::size_t& n) : n_(n) { ++n_; }
  ~counted() { --n_; }
  counted(const counted&) = delete;
  counted& operator=(const counted&) = delete;
  std::size_t& n_;
};
}  // namespace

http_processor::~http_processor() = default;

awaitable<outcome> http_processor::process(job j) {
  counted in_process(processing_);
  auto built = build_request(opts_->url, opts_->shape, j);
  if (!built.error.empty()) co_return outcome::invalid(built.error);  // no call: no news of the API
  // Bought before the run for this item (the pre-flight's answer): its answer, no second call.
  if (opts_->prefetched && opts_->prefetched->holds_any())
    if (auto bought = opts_->prefetched->take(request_identity(opts_->url, opts_->shape, j)))
      co_return mapped(judge(j, std::move(*bought), std::chrono::milliseconds{0}));
  if (opts_->reuse) co_return mapped(co_await call_or_reuse(j, std::move(built.req)));
  bool aborted = false;
  co_return mapped(co_await call(j, std::move(built.req), aborted));
}

outcome http_processor::mapped(outcome o) {
  if (opts_->map.empty() || o.k != outcome::kind::done || o.no_data) return o;  // no data: the API's words kept
  simdjson::dom::element doc;
  if (parser_->dom.parse(o.result).get(doc)) return o;  // checked already: never the case
  o.result = mapped_object(opts_->map, doc);
  return o;
}

awaitable<http_processor::sent_call> http_processor::send_counted(const job& j, request req) {
  // An API metered in tokens: the request's tokens first (the bucket may hold the call for
  // seconds), then its rate slot. A request larger than the whole bucket is never sent.
  auto& tokens = opts_->limiter->tokens();
  token_ticket ticket;
  // The body's max_tokens, read once for the tokens and the money (a JSON parse of the body).
  const bool metered = tokens.watching() || !opts_->spend_budgets.empty();
  const auto max_out = metered ? max_output_tokens(req.body) : std::nullopt;
  if (const auto charge = token_charge(tokens, req.body.size(), max_out)) {
    // Never sent only when even the estimate's low side (4 bytes a token at most) is too large.
    if (auto why = never_admitted(tokens, req.body.size(), max_out); !why.empty()) co_return sent_call{{}, {}, false, std::move(why)};
    ticket = co_await take_tokens(tokens, *charge, opts_->limiter->tokens_shared());
  }
  co_await wait_for_slot(*opts_->limiter, opts_->url.host());  // cancelled at shutdown: the item is released
  // A budget in money: the most the request can cost, taken once its turn has come (none left:
  // not sent; the tickets, dropped unsent, give everything back).
  std::vector<spend_ticket> spend;
  if (!opts_->spend_budgets.empty()) {
    const auto most = most_cost(tokens.estimator, req.body.size(), max_out, opts_->price);
    if (auto why = never_fits(opts_->spend_budgets, most); !why.empty()) co_return sent_call{{}, {}, false, std::move(why)};
    auto taken = co_await take_spend(opts_->spend_budgets, most);
    if (!taken) co_return sent_call{{}, {}, true, {}};
    spend = std::move(*taken);
  }
  const auto body_bytes = req.body.size();
  auto to = opts_->url.origin();  // named: no temporaries inside a co_await (g++ 12)
  // max_processing and the latency figure time the call, not the wait for a slot or for a
  // connection (max_connections): both start when the request goes out.
  struct send_clock {  // one pointer in the hook: std::function keeps it without allocating
    http_processor* self;
    const job* item;
    std::chrono::steady_clock::time_point sent;
    bool refused = false;  // a budget had no call left for it: nothing was sent
    std::vector<spend_ticket>* spend;
  } clock{this, &j, std::chrono::steady_clock::now(), false, &spend};
  // The call is counted against the budgets when its request goes out, not before: a call
  // cancelled while it waited for a connection was never made. An item's first call of its claim
  // was reserved when it was claimed (budget_gate); a further one (run again after an outage)
  // goes only with room left.
  req.on_send = [&clock] {
    if (!clock.self->opts_->budgets.empty()) {
      const auto key = budget_item_key(clock.item->id, clock.item->token);
      for (const auto& b : clock.self->opts_->budgets)
        if (!b->item_calls(key)) {
          clock.refused = true;
          return false;
        }
    }
    clock.sent = std::chrono::steady_clock::now();
    for (auto& t : *clock.spend) t.sent();  // from now on the API may charge it
    if (clock.self->work_started_) clock.self->work_started_(*clock.item);
    return true;
  };
  if (ticket) req.on_wire = [&ticket](bool reused) { ticket.written(reused); };
  auto r = co_await client_.send(std::move(to), std::move(req));
  std::optional<token_usage> read;  // the answer's usage, read once for the tokens and the money
  if (ticket) {  // an API that states a token limit is metered from then on
    const auto& used = read.emplace(ticket.settle(r, body_bytes));
    if (figures_) {
      if (used.known()) {
        figures_->tokens_in.fetch_add(static_cast<std::uint64_t>(used.input), std::memory_order_relaxed);
        figures_->tokens_out.fetch_add(static_cast<std::uint64_t>(used.output), std::memory_order_relaxed);
      }
      figures_->token_limit_per_minute.store(tokens.per_minute(), std::memory_order_relaxed);
    }
  }
  settle_spend(spend, r, clock.refused, opts_->price, read ? &*read : nullptr);
  co_return sent_call{std::move(r), clock.sent, clock.refused, {}};
}

awaitable<http_processor::asked> http_processor::ask(const job& j, request req) {
  auto s = co_await send_counted(j, std::move(req));
  if (!s.too_large.empty()) co_return asked{std::move(s.r), true, std::move(s.too_large)};
  if (s.refused) co_return asked{std::move(s.r), true};
  count_exchange(figures_, s.r, s.sent);
  bool api_pace = false;
  const auto stop_for = honor_stop_signals(*opts_->limiter, opts_->url.host(), s.r, opts_->max_retry_after, figures_,
                                           opts_->adaptive.has_value(), s.sent, &api_pace);  // a 429's pause holds for the run
  tell_limit_of_pause(client_, origin_, s.r, stop_for, api_pace, opts_->limiter->tokens().active(), s.sent);
  co_return asked{std::move(s.r), false};
}

awaitable<outcome> http_processor::call(const job& j, request req, bool& aborted) {
  counted in_call(calling_);
  // A traced run (the job has a trace): the call is a span of the item's trace, and the API is
  // told so (traceparent) unless the run says not to. Untraced, this costs the one branch.
  std::optional<traced_call> traced;
  if (j.trace.valid()) traced = begin_traced_call(j, req);
  auto s = co_await send_counted(j, std::move(req));
  if (!s.too_large.empty()) co_return outcome::invalid(std::move(s.too_large));  // no call: no news of the API
  if (s.refused) {
    aborted = true;  // nothing to share with joined items: each asks for itself
    co_return outcome::not_sent("not sent: the budget has no room left for it");
  }
  auto& r = s.r;
  const auto& clock = s;
  aborted = r.ec == net::error::operation_aborted;
  count_exchange(figures_, r, clock.sent);
  // One reading of the API's stop signals serves both the shared pause and this item's retry.
  bool api_pace = false;
  const auto stop_for = honor_stop_signals(*opts_->limiter, opts_->url.host(), r, opts_->max_retry_after, figures_,
                                           opts_->adaptive.has_value(), clock.sent, &api_pace);
  tell_limit_of_pause(client_, origin_, r, stop_for, api_pace, opts_->limiter->tokens().active(), clock.sent);
  // A trace not sampled is exported only if its item fails: its call's span is made only when the
  // call did not end it done (the answer, without its body, is kept that long).
  std::optional<span_record> span;
  std::optional<response> head;
  if (traced && j.trace.recording && j.trace.sampled) span = end_traced_call(j, *traced, r, clock.sent);
  if (traced && j.trace.recording && !j.trace.sampled) head = response{r.ec, r.stage, r.detail, r.status, {}, {}, r.reused};
  auto o = judge(j, std::move(r), stop_for, api_pace);
  if (head && o.k != outcome::kind::done) span = end_traced_call(j, *traced, *head, clock.sent);
  if (span) o.spans.push_back(std::move(*span));
  co_return o;
}

awaitable<outcome> http_processor::call_or_reuse(const job& j, request req) {
  auto& reuse = *opts_->reuse;
  // What makes the answer (headers that read the item's fields do: Accept-Language: {lang}), and
  // never a secret: it is what the store keeps with the answer.
  const auto key = request_identity(opts_->url, opts_->shape, j);
  if (key.empty()) {  // never the case once the request was built; one key for all would mix answers
    bool aborted = false;
    co_return co_await call(j, std::move(req), aborted);
  }
  for (;;) {
    auto turn = reuse.begin(key, ex_);
    if (turn.cached) {
      if (counters_) bump(counters_->answers_reused);
      outcome o = reused_answer(std::move(*turn.cached));
      o.shared = true;
      co_return o;
    }
    if (turn.leads()) {
      answer_reuse::lead lead(reuse, key);  // a cancelled call wakes its waiters to call themselves
      auto* stored = reuse.stored();
      const auto stored_key = stored ? stored->key_for(key) : std::nullopt;  // one digest for find and keep
      if (stored_key) {
        auto found = co_await stored->find(*stored_key);
        // Kept by a run whose checks may differ (no_status_check, a larger max_body): used
        // only if this run would have accepted it, else the API is asked.
        if (found && acceptable(found->answer)) {
          if (counters_) {
            bump(counters_->answers_reused);
            bump(counters_->answers_from_store);
          }
          outcome o = reused_answer(std::move(found->answer));
          o.shared = true;
          // Into this process's cache too (its answer_ttl counted from when it was kept), and
          // to the joined.
          lead.finish(&o, answer_cache::clock::now() - found->age);
          co_return o;
        }
      }
      if (counters_) bump(counters_->answer_calls);
      bool aborted = false;
      auto o = co_await call(j, std::move(req), aborted);
      if (!aborted) lead.finish(&o);
      if (stored_key && !aborted && o.k == outcome::kind::done) stored->keep(*stored_key, o.result);
      co_return o;
    }
    auto leader = co_await reuse.wait(key, turn.joined);
    if (!leader) continue;  // the leader ended without an outcome: call (or join) again
    if (counters_) bump(counters_->answers_joined);
    co_return shared_outcome(*leader, full_jitter_backoff(j.attempts, opts_->backoff_base, opts_->backoff_max, rng_));
  }
}

json_check_result http_processor::check_body(std::string& body) {
  static const std::vector<std::string> nothing;
  return check_json_object(parser_->parser, body, 64, opts_->status_field_check ? ipapi::members() : nothing);
}

bool http_processor::acceptable(std::string& body) {
  if (body.size() > opts_->http.max_body) return false;
  const auto check = check_body(body);
  if (!check.ok) return false;
  if (!opts_->no_data_fails) return true;
  return !(opts_->status_field_check && ipapi::no_data_reason(check)) && !no_data_in(body);
}

std::optional<std::string> http_processor::llm_failure_in(const std::string& body) {
  if (!opts_->expect_json && !may_be_llm_answer(body)) return std::nullopt;
  simdjson::dom::element doc;
  if (parser_->dom.parse(body).get(doc)) return std::nullopt;  // checked already: never the case
  if (auto why = llm_answer_failure(doc)) return why;
  if (opts_->expect_json) return not_json_at(*opts_->expect_json, doc);
  return std::nullopt;
}

std::optional<std::string> http_processor::no_data_in(const std::string& body) {
  if (opts_->no_data.members.empty()) return std::nullopt;
  simdjson::dom::element doc;
  if (parser_->dom.parse(body).get(doc)) return std::nullopt;
  return no_data_by_member(opts_->no_data, doc);
}

outcome http_processor::reused_answer(std::string answer) {
  std::optional<std::string> no_data;
  if (opts_->status_field_check) {
    std::string probe = answer;  // the check reserves its padding in the text it reads
    const auto check = check_body(probe);
    if (check.ok) no_data = ipapi::no_data_reason(check);
  }
  if (!no_data) no_data = no_data_in(answer);
  if (no_data) return outcome::no_data_answer(std::move(answer), std::move(*no_data));
  return outcome::done(std::move(answer));
}

bool http_processor::asked_for(const job& j, std::string_view key) const {
  // Most often the key is the template's one field's value; else it must be in the request
  // (a fixed key in the path, the field in the query string: /json/8.8.8.8?ip={ip}).
  const auto& names = opts_->url.fields();
  if (names.size() == 1)
    if (const auto* f = j.field(names.front()); f && f->value == key) return true;
  // A field the headers or the body send (POST {"ip": {ip}}).
  auto sent_in = [&](const field_template& t) {
    return std::any_of(t.fields().begin(), t.fields().end(), [&](const std::string& name) {
      const auto* f = j.field(name);
      return f && f->value == key;
    });
  };
  if (sent_in(opts_->shape.body)) return true;
  for (const auto& h : opts_->shape.headers)
    if (sent_in(h.value)) return true;
  const auto target = opts_->url.expand(j);
  return target.error.empty() && target.target.find(key) != std::string::npos;
}

outcome http_processor::judge(const job& j, response r, std::chrono::milliseconds stop_for, bool api_pace) {
  const auto backoff = full_jitter_backoff(j.attempts, opts_->backoff_base, opts_->backoff_max, rng_);
  if (!r.ec && opts_->no_data.by_status(r.status)) {
    std::string why = "HTTP " + std::to_string(r.status) + ": no data for this item";
    if (opts_->no_data_fails) return outcome::fail(std::move(why), r.status);
    const bool object = check_body(r.body).ok;
    if (object) compact_json_in_place(r.body);
    return outcome::no_data_answer(no_data_answer_json(r.status, r.body, object), std::move(why), r.status);
  }
  if (!r.ec)
    if (const auto code = account_spent_code(r.status, r.body); !code.empty()) {
      // The account's, not the item's: the run stops, and the item goes back as it came; with
      // no run to stop, the item fails with the API's words.
      auto said = "the account can make no more calls (" + code + "): " + with_api_message(r.describe(), r.body);
      if (opts_->account_spent && opts_->account_spent(said))
        return outcome::paced_retry(std::chrono::milliseconds{0}, std::move(said), r.status);
      return outcome::fail(std::move(said), r.status);
    }
  if (auto o = judge_exchange(r, opts_->http, backoff, stop_for, api_pace)) return std::move(*o);
  auto check = check_body(r.body);
  if (!check.ok) return outcome::retry(backoff, r.describe() + " with a bad body: " + check.error, r.status);
  if (auto why = llm_failure_in(r.body)) return outcome::fail(std::move(*why), r.status);
  std::optional<std::string> no_data;
  if (opts_->status_field_check) {
    // The answer echoes its key (ip-api's "query"): an answer naming a key this item's request
    // did not contain is another request's, never this item's.
    if (const auto answered = ipapi::answered_key(check); !answered.empty() && !asked_for(j, answered)) {
      // Its connection is back among the idle ones and may be one answer behind: closed, so
      // the stray answer costs this item alone.
      client_.drop_idle(origin_);
      return outcome::retry(backoff, r.describe() + " with the answer for another key (\"" +
                                         std::string(answered.substr(0, 64)) + "\"): not this item's", r.status);
    }
    no_data = ipapi::no_data_reason(check);
  }
  if (!no_data) no_data = no_data_in(r.body);
  if (no_data && opts_->no_data_fails) return outcome::fail(std::move(*no_data), r.status);
  compact_json_in_place(r.body);  // a pretty-printed answer, stored as one line
  if (no_data) return outcome::no_data_answer(std::move(r.body), std::move(*no_data), r.status);
  return outcome::done(std::move(r.body));
}

http_processor::traced_call http_processor::begin_traced_call(const job& j, request& req) {
  traced_call t;
  std::uint64_t v = 0;
  while (v == 0) v = rng_();
  for (int i = 7; i >= 0; --i, v >>= 8) t.span[i] = static_cast<std::uint8_t>(v & 0xff);
  t.method = method_name(req.method);
  t.url = redacted_url(opts_->url, req.target);
  if (opts_->traceparent) req.headers += "traceparent: " + traceparent_header(j.trace, t.span) + "\r\n";
  return t;
}

span_record http_processor::end_traced_call(const job& j, traced_call& t, const response& r,
                                            std::chrono::steady_clock::time_point sent) {
  const auto now = std::chrono::system_clock::now();
  const auto took = std::chrono::steady_clock::now() - sent;
  call_facts facts{t.method, std::move(t.url), opts_->url.host(), opts_->url.port(), j.attempts,
                   now - std::chrono::duration_cast<std::chrono::system_clock::duration>(took), now};
  return call_span(j.trace, t.span, facts, r);
}

std::shared_ptr<const processor_options> for_shard(std::shared_ptr<const processor_options> o, std::size_t index) {
  if (o->max_connections == 0) return o;
  auto mine = std::make_shared<processor_options>(*o);
  mine->http.max_connections_per_host = connection_share(o->max_connections, o->shards, index);
  return mine;
}

shard_place place_of(const shard_info& s) {
  return shard_place{s.index, s.shards, s.ceiling, s.whole_ceiling, s.capacity_changed};
}

client_options shard_client_options(const processor_options& o, http_figures* figures, const shard_place& place) {
  client_options c = o.http;
  c.figures = figures;
  c.adaptive = o.adaptive;
  if (!c.adaptive) return c;
  c.shard = place.index;
  c.shards = std::max<std::size_t>(1, place.count);
  // max_connections over the shards, rounded down: every shard's own cap is this or one more.
  if (o.max_connections > 0) c.most_per_shard = std::max<std::size_t>(1, o.max_connections / c.shards);
  // One ceiling for the origin, the same whichever shard makes its limit first: the engine's
  // whole concurrency (each shard's part times the shards differs by the rounding).
  if (place.whole > 0) c.adaptive->max = static_cast<double>(place.whole);
  else if (place.ceiling > 0) c.adaptive->max = static_cast<double>(place.ceiling * c.shards);
  c.on_limit_change = place.capacity_changed;
  return c;
}

processor_factory make_http_processor_factory(processor_options opts) {
  if (!opts.limiter) opts.limiter = std::make_shared<rate_limiter>();
  auto shared = std::make_shared<const processor_options>(std::move(opts));
  return [shared](const shard_info& s) -> std::unique_ptr<processor> {
    return std::make_unique<http_processor>(s.executor, for_shard(shared, s.index), s.figures, s.work_started,
                                            place_of(s));
  };
}

}  // namespace dibs::http
