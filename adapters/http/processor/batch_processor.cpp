#include <dibs/http/batch_processor.hpp>

#include "api_body.hpp"
#include "batch_members.hpp"
#include "json_check.hpp"
#include "answer_mapping.hpp"
#include "profiles/ipapi/ipapi_profile.hpp"
#include "batch_halving.hpp"
#include "batch_items.hpp"
#include "no_data_verdict.hpp"
#include "prefetched_answers.hpp"
#include "request_builder.hpp"
#include "token_charge.hpp"

#include "adapters/http/budget/call_budget.hpp"
#include "adapters/http/rate/provider_headers.hpp"

#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>
#include "engine/src/uri_redact.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dibs::http {

namespace {
// A batch request carries up to batch_size items: the limit on requests, in items, is that many
// times higher (and its ceiling as many times lower).
shard_place in_requests(shard_place p, std::size_t batch_size) {
  const auto in_batches = [batch_size](std::size_t items) { return std::max<std::size_t>(1, (items + batch_size - 1) / batch_size); };
  if (p.ceiling > 0) p.ceiling = in_batches(p.ceiling);
  if (p.whole > 0) p.whole = in_batches(p.whole);
  return p;
}
// A template's answer carries a row's answer a row: the cap on an answer's size is a row's times
// the batch's rows (an OpenAI embedding of 1,536 floats is some 33 KB; a hundred of them 3 MB).
client_options batch_client_options(const batch_processor_options& o, http_figures* figures, const shard_place& place) {
  auto c = shard_client_options(o.call, figures, place);
  c.max_body = o.call.http.max_body * std::max<std::size_t>(o.batch_size, 1);
  // A batch endpoint is built to be asked many rows at once, and a run of them lasts few round
  // trips: slow start begins where its second step would be (16 requests), a round trip sooner.
  if (o.wide_start && c.adaptive) c.adaptive->initial = std::max(c.adaptive->initial, 16.0);
  return c;
}
}  // namespace

batch_processor::batch_processor(net::any_io_executor ex, std::shared_ptr<const batch_processor_options> opts,
                                 counters* figures, std::function<void(const job&)> work_started, shard_place place)
    : opts_(std::move(opts)),
      figures_(figures ? &figures->extras.get<http_figures>() : nullptr),
      client_(ex, batch_client_options(*opts_, figures_, in_requests(std::move(place), opts_->batch_size))),
      origin_(opts_->call.url.origin()),
      parser_(std::make_unique<json_parser>()),
      rng_(std::random_device{}()),
      work_started_(std::move(work_started)) {
  parser_->item = batch_item_pointer::parse(opts_->item);  // checked by the factory
}

// In rows of the batches as they are now (grown, or cut to a learned size): enough rows for every
// request the limit allows, and no more held leased than requests can carry; and the trial's
// extra rows while one waits or runs (without them the rows in hand fill batches of the size as
// it is, and the trial's batch never fills).
std::size_t batch_processor::capacity() const {
  const auto rows = rows_a_batch();
  const auto trial = opts_->learned_rows->load(std::memory_order_relaxed) ? 0 : opts_->trial_rows->load(std::memory_order_relaxed) >> 1;
  return client_.limit(origin_) * rows + (trial > rows ? trial - rows : 0);
}

void batch_processor::set_ceiling(std::size_t ceiling) {
  concurrency_changed(ceiling, ceiling * client_.options().shards);
}

void batch_processor::concurrency_changed(std::size_t, std::size_t whole) {
  client_.set_ceiling(std::max<std::size_t>(1, (whole + opts_->batch_size - 1) / opts_->batch_size));
}

batch_processor::~batch_processor() = default;

void batch_processor::close(batch& b) {
  b.closed = true;
  if (open_.get() == &b) open_.reset();
  b.full.cancel();
}

awaitable<outcome> batch_processor::process(job j) {
  const auto ex = co_await net::this_coro::executor;
  auto me = std::make_shared<member>(ex);
  if (opts_->text_keys) {  // ip-api's: an address or a host name, or nothing to ask
    const auto key = source_field(j, opts_->key_field, opts_->call.url.max_value_bytes());
    if (!key.error.empty()) co_return outcome::fail(key.error);
  }
  auto element = opts_->body.element(j, opts_->call.url.max_value_bytes());
  if (!element.error.empty()) co_return outcome::fail(std::move(element.error));  // this item alone
  me->element = std::move(element.text);
  if (!opts_->echo.empty()) me->key = echo_key(j.field(opts_->key_field));  // the key its answer must name
  const std::size_t bytes = me->element.size() + 1;
  // Too large to join the open batch (its bytes, or tokens the limit could never hold at once):
  // that batch goes as it is, and this item opens the next.
  if (open_ && !open_->members.empty() && would_overflow(open_->bytes + bytes)) {
    open_->overflowed = true;
    close(*open_);
  }
  me->attempts = j.attempts;
  if (work_started_) {
    me->claimed.id = j.id;
    me->claimed.by = j.by;
    me->claimed.token = j.token;
  }
  me->wake.expires_at(net::steady_timer::time_point::max());

  // Asked alone by the pre-flight (a template's batch of this one row), and paid for: its answer
  // is this row's, judged as a batch's of one, never asked again.
  if (opts_->call.prefetched && opts_->call.prefetched->holds_any())
    if (auto answered = opts_->call.prefetched->take(batch_row_identity(j))) {
      members alone{me};
      settle_all(alone, *answered, std::chrono::steady_clock::now());
      co_return std::move(*me->result);
    }

  const bool leader = !open_;
  if (leader) {
    open_ = std::make_shared<batch>(ex);
    open_->rows = rows_a_batch();
    if (const auto trial = claim_trial()) {
      open_->rows = trial;
      open_->trial = true;
    }
  }
  auto b = open_;
  me->of = b.get();
  b->members.push_back(me);
  b->bytes += bytes;
  if (b->members.size() >= b->rows) close(*b);

  if (leader) {
    try {
      co_await lead(*b);
    } catch (...) {
      // Cancelled: the members must not wait for an answer this leader will never fetch.
      close(*b);
      for (auto& m : b->members)
        if (m != me && !m->result) {
          m->result = outcome::retry(std::chrono::milliseconds{0}, "its batch request was cancelled");
          m->wake.cancel();
        }
      throw;
    }
    co_return std::move(*me->result);
  }
  co_await me->wake.async_wait(net::as_tuple(net::use_awaitable));
  if (!me->result) {  // this pipeline was cancelled: the leader's further requests leave it out
    me->gone = true;
    throw boost::system::system_error(net::error::operation_aborted);
  }
  co_return std::move(*me->result);
}

bool batch_processor::would_overflow(std::size_t body_bytes) const {
  if (body_bytes + opts_->body.fixed_bytes() > opts_->max_bytes) return true;
  // A batch the token limit could never admit at once would wait for ever: closed before that
  // (at 4 bytes a token, the estimate's low side).
  const auto& tokens = opts_->call.limiter->tokens();
  return tokens.active() && static_cast<std::int64_t>(body_bytes / 4) > tokens.capacity();
}

awaitable<void> batch_processor::lead(batch& b) {
  // A trial ends with its batch, whatever ends it (a cancellation too), unless its judgement
  // ended it first (taken whole: the next size's trial may follow at once). One whose batch did
  // not fill as the rows in hand or the linger ran out said nothing of its size: the next batch
  // opened tries it again. One closed by its bytes (or tokens) never fills: it ends.
  struct trial_end {
    const batch& b;
    std::atomic<std::size_t>& trial;
    ~trial_end() {
      if (!b.trial || b.trial_settled) return;
      trial.store(b.members.size() < b.rows && !b.overflowed ? b.rows << 1 : 0);
    }
  } const ends{b, *opts_->trial_rows};
  if (!b.closed) {
    // A trial waits longer for its rows: it needs several claims' worth, and one sent short
    // says nothing of its size (a slower store, or a busy machine, kept trials of 400 at 100-200
    // rows, and batches never grew). Its rows wait; the other batches go meanwhile.
    b.full.expires_after(b.trial ? std::max(opts_->linger * trial_linger_factor, trial_linger_least) : opts_->linger);
    auto [ec] = co_await b.full.async_wait(net::as_tuple(net::use_awaitable));
    if (ec && !b.closed) throw boost::system::system_error(ec);  // cancelled, not filled
  }
  co_await rate_slot(opts_->call.url.host());  // the batch keeps filling meanwhile
  close(b);
  std::size_t spare = halving_spare(b.members.size());
  // A batch formed before the API said how many rows it takes goes in parts it takes.
  const auto learned = opts_->learned_rows->load();
  const auto rows = learned ? std::min(learned, b.rows) : b.rows;
  if (b.members.size() > rows) co_return co_await send_in_parts(b.members, true, spare, rows);
  auto sent = co_await send_once(b.members, true);
  judge_growth(b, sent);
  if (sent.refused && !sent.settled) {
    auto ms = b.members;
    co_await resolve(ms, std::move(sent), spare);
  }
}

// Halvings of a batch of `rows` refused whole: enough to find one refused row (two requests a
// halving), and a few more; as many again for each row found (it failed alone: the halving found
// what it looked for); rows still refused together after that are asked again in other batches.
std::size_t batch_processor::halving_spare(std::size_t rows) {
  return 2 * static_cast<std::size_t>(std::ceil(std::log2(std::max<std::size_t>(rows, 1)))) + 2;
}

void batch_processor::learn_rows(std::size_t took, std::size_t refused, const std::string& why) {
  auto& learned = *opts_->learned_rows;
  auto was = learned.load();
  while ((was == 0 || took < was) && !learned.compare_exchange_weak(was, took)) {
  }
  // Growth ends at a learned size: a trial waiting for a batch to open never will.
  auto armed = opts_->trial_rows->load();
  if (armed != 0 && !(armed & 1)) opts_->trial_rows->compare_exchange_strong(armed, 0);
  if (was == 0 || took < was)
    log::warn("the API refuses a batch of ", refused, " rows whole (", why, ") and takes ", took, ": batches of ", took,
              " rows at most from now on");
}

std::size_t batch_processor::rows_a_batch() const {
  const auto grown = opts_->grown_rows->load(std::memory_order_relaxed);
  const auto size = std::max(grown, opts_->batch_size);
  const auto learned = opts_->learned_rows->load(std::memory_order_relaxed);
  return learned ? std::min(learned, size) : size;
}

std::size_t batch_processor::claim_trial() {
  auto state = opts_->trial_rows->load();
  if (state == 0 || (state & 1) || opts_->learned_rows->load() != 0) return 0;
  // A trial armed by a batch judged as another shard's trial took a larger size: stale, dropped.
  if ((state >> 1) <= rows_a_batch()) {
    opts_->trial_rows->compare_exchange_strong(state, 0);
    return 0;
  }
  return opts_->trial_rows->compare_exchange_strong(state, state | 1) ? state >> 1 : 0;
}

void batch_processor::judge_growth(batch& b, const sent_batch& sent) {
  const bool whole = sent.taken && sent.all_answered && sent.rows == b.rows;
  if (b.trial && whole) {
    auto grown = opts_->grown_rows->load();  // only ever up (a stale trial of another shard's)
    while (grown < b.rows && !opts_->grown_rows->compare_exchange_weak(grown, b.rows)) {
    }
    if (grown < b.rows) log::info("the API took a batch of ", b.rows, " rows whole: batches of ", b.rows, " rows from now on");
    // The trial is over, and it is itself a batch at the size taken whole: it may call the next
    // size's trial below. (Waiting for another batch of this size to be formed and answered
    // cost a server that serves one request at a time a whole queue's wait a step.)
    b.trial_settled = true;
    opts_->trial_rows->store(0);
  }
  // A larger batch timed out, or the server failed on it (out of memory on that many rows, a
  // proxy's timeout): the size before it is the most from now on, as for a size it refused.
  if (b.trial && sent.size_failure) learn_rows(rows_a_batch(), b.rows, sent.why);
  if (!whole || b.rows != rows_a_batch() || opts_->grow_to <= b.rows || opts_->learned_rows->load() != 0) return;
  if (!requests_scarce()) return;
  const auto next = trial_size(b.rows, b.bytes, sent.answer_bytes, sent.took);
  if (next <= b.rows) return;
  std::size_t none = 0;  // one trial at a time, for every shard
  opts_->trial_rows->compare_exchange_strong(none, next << 1);
}

awaitable<void> batch_processor::rate_slot(const std::string& host) {
  const bool waited = co_await wait_for_slot(*opts_->call.limiter, host);  // no co_await inside a condition (g++ 12)
  if (waited) opts_->rate_held->store(true, std::memory_order_relaxed);
}

bool batch_processor::requests_scarce() const {
  return opts_->rate_held->load(std::memory_order_relaxed) || client_.requests_scarce(origin_);
}

// The trial goes as far as it may in one step, doubling while the bounds hold, rather than twice
// the size a trial at a time: each trial waits its turn behind the requests in flight, a whole
// queue's wait against a server that serves one at a time (growth to 400 took 2 of a 10 s run
// by steps). A size the API refuses is found as well from the larger trial (its words, or
// halving); a trial that fails for its size (a 500, a timeout) ends growth at the size before it.
std::size_t batch_processor::trial_size(std::size_t rows, std::size_t body_bytes, std::size_t answer_bytes,
                                        std::chrono::steady_clock::duration took) const {
  // Its answer as many times as large must stay under the bound and the answer cap (a row's
  // max_body times batch_size: a grown batch's answer cut there would fail every row), twice
  // its time as many times as long under the request timeout, and its body as many times as
  // large must not close it before its rows (the request's byte cap, the token limit:
  // would_overflow), or the trial never fills.
  const auto answer_cap = std::min(opts_->grow_answer_bytes, client_.options().max_body);
  std::size_t next = rows;
  while (next <= opts_->grow_to / 2) {
    const auto times = next * 2 / rows;
    if (answer_bytes * times > answer_cap || took * 2 * static_cast<long>(times) > client_.options().request_timeout ||
        would_overflow(body_bytes * times / 4 * 5))  // a quarter's room: texts vary in length
      break;
    next *= 2;
  }
  return next;
}

awaitable<void> batch_processor::send_in_parts(members ms, bool slot_taken, std::size_t& spare, std::size_t rows) {
  if (rows == 0) rows = rows_a_batch();
  for (std::size_t from = 0; from < ms.size(); from += rows) {
    members part(ms.begin() + static_cast<std::ptrdiff_t>(from),
                 ms.begin() + static_cast<std::ptrdiff_t>(std::min(from + rows, ms.size())));
    auto refused = co_await send_once(part, slot_taken && from == 0);
    if (refused.refused && !refused.settled) co_await resolve(part, std::move(refused), spare);
  }
}

awaitable<batch_processor::sent_batch> batch_processor::send_once(members ms, bool slot_taken) {
  // Rows abandoned meanwhile (max_processing, while their batch was halved) are asked again in
  // another batch: a further request of this one sends (and pays for) none of them.
  std::erase_if(ms, [](const std::shared_ptr<member>& m) { return m->gone; });
  if (ms.empty()) co_return sent_batch{};
  const auto& url = opts_->call.url;
  auto& tokens = opts_->call.limiter->tokens();
  std::vector<std::string_view> elements;
  elements.reserve(ms.size());
  for (const auto& m : ms) elements.push_back(m->element);
  auto body = opts_->body.join(elements);
  if (tokens.active()) {
    // More tokens than the limit holds at once (at 4 bytes a token, and its max_tokens): never
    // admitted. Halved; a row alone that large fails with no call, as one row's request does.
    if (auto why = never_admitted(tokens, body.size(), max_output_tokens(body)); !why.empty()) {
      if (ms.size() > 1) co_return sent_batch{true, false, std::move(why), 0, false, true};
      ms.front()->result = outcome::invalid(why);
      ms.front()->wake.cancel();
      co_return sent_batch{true, true, std::move(why), 0};
    }
  }
  if (!slot_taken) co_await rate_slot(url.host());
  // The batch's fixed headers (an API key: no header of a batch reads a field, batch_processor.hpp).
  auto built = build_request(url, opts_->call.shape, job{});
  request req = std::move(built.req);
  req.method = request::verb::post;
  req.body = std::move(body);
  req.content_type = "application/json";
  // An API metered in tokens: the batch's tokens before it goes, settled by its usage.
  token_ticket ticket;
  if (const auto charge = token_charge(tokens, req.body)) ticket = co_await take_tokens(tokens, *charge, opts_->call.limiter->tokens_shared());
  const auto body_bytes = req.body.size();
  auto to = url.origin();
  // max_processing and the latency figure time the call, not the wait for a connection
  // (max_connections): both start when the request goes out, as in http_processor.
  auto sent = std::chrono::steady_clock::now();
  // One call for the batch, counted when it goes out: covered by a member's reservation when one
  // of them calls for the first time in its claim, else only with room left in the budget.
  std::vector<std::string> member_keys;
  if (!opts_->call.budgets.empty())
    for (const auto& m : ms) member_keys.push_back(budget_item_key(m->claimed.id, m->claimed.token));
  bool refused = false;
  req.on_send = [this, &ms, &sent, &member_keys, &refused] {
    for (const auto& budget : opts_->call.budgets)
      if (!budget->batch_calls(member_keys)) {
        refused = true;
        return false;
      }
    sent = std::chrono::steady_clock::now();
    // Every row of the batch still waiting has its time (max_processing) from this request on:
    // this request's rows, those the halves or parts still to go will send, and the leader that
    // sends them (timed from its own request, it was cut while it sent the others', and the
    // answers paid for were thrown away).
    if (work_started_) {
      const auto& rows = ms.front()->of->members;  // the leader first: it drives, answered or not
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (i == 0 || (!rows[i]->result && !rows[i]->gone)) work_started_(rows[i]->claimed);
    }
    return true;
  };
  if (ticket) req.on_wire = [&ticket](bool reused) { ticket.written(reused); };
  auto r = co_await client_.send(std::move(to), std::move(req));
  if (refused) {  // nothing was sent: every member goes back as it was, no attempt spent
    for (auto& m : ms) {
      m->result = outcome::not_sent("not sent: the call budget has no call left for its batch");
      m->wake.cancel();
    }
    co_return sent_batch{};
  }
  if (ticket) {
    const auto used = ticket.settle(r, body_bytes);
    if (figures_ && used.known()) {
      figures_->tokens_in.fetch_add(static_cast<std::uint64_t>(used.input), std::memory_order_relaxed);
      figures_->tokens_out.fetch_add(static_cast<std::uint64_t>(used.output), std::memory_order_relaxed);
    }
    if (figures_) figures_->token_limit_per_minute.store(tokens.per_minute(), std::memory_order_relaxed);
  }
  count_exchange(figures_, r, sent);
  // The client reports its own cancellation as an answer; it is the leader's cancellation
  // (shutdown, max_processing), and the members must hear it as that, not as a failed read.
  if (r.ec == net::error::operation_aborted) throw boost::system::system_error(r.ec);
  // A batch refused as a whole for what it carries (one text too long, one the API can't read,
  // too many rows): the caller halves it (resolve). A row alone is settled here.
  // OpenAI's 429 "Request too large" is one too: more tokens at once than its whole limit.
  const bool too_many_tokens = r.status == 429 && ms.size() > 1 && never_fits_the_limit(r.body);
  const bool refused_whole = !r.ec &&
                             (r.status == 400 || r.status == 413 || r.status == 422 || too_many_tokens) &&
                             account_spent_code(r.status, r.body).empty();
  sent_batch out;
  if (refused_whole) out = {true, ms.size() == 1, with_api_message(r.describe(), r.body), r.status};
  out.taken = !r.ec && r.status >= 200 && r.status < 300;
  if (!out.refused || out.settled) settle_all(ms, r, sent);
  out.rows = ms.size();
  out.all_answered =
      std::all_of(ms.begin(), ms.end(), [](const auto& m) { return m->result && m->result->k != outcome::kind::retry; });
  out.answer_bytes = r.body.size();
  out.took = std::chrono::steady_clock::now() - sent;
  out.size_failure = r.ec == net::error::timed_out || r.status == 500 || r.status == 502 || r.status == 504;
  if (out.size_failure && out.why.empty()) out.why = r.describe();
  co_return out;
}

awaitable<bool> batch_processor::resolve(members& ms, sent_batch whole, std::size_t& spare, bool confirming) {
  const auto again = [&](members& some, const std::string& why) {
    for (auto& m : some)
      if (!m->result) {
        m->result = outcome::retry(full_jitter_backoff(m->attempts, opts_->call.backoff_base, opts_->call.backoff_max, rng_),
                                   why + " (asked again in another batch)", whole.status);
        m->wake.cancel();
      }
  };
  if (spare < 2) {  // no halving left: asked again later, in other batches
    again(ms, whole.why);
    co_return false;
  }
  // Another batch found how many rows the API takes meanwhile: sent in parts of that many.
  if (const auto learned = opts_->learned_rows->load(); learned && ms.size() > learned) {
    co_await send_in_parts(ms, false, spare, learned);
    co_return false;
  }
  spare -= 2;
  // Split in halves; or, where the refusal names the most rows a request takes (TEI's "maximum
  // allowed batch size 32"), in a part of that many and the rest. Words are not proof (a row's own
  // refusal may name a count), so that count is learned once a part of that many is taken and the
  // rest refused in other words naming it again (below), or both parts taken, as any halving's;
  // a count under an eighth of the rows is not followed (a split so uneven would look for a
  // refused row one step at a time).
  auto split_at = ms.size() / 2;
  std::optional<std::size_t> named;
  if (!whole.local && !confirming)
    if (const auto cap = rows_cap_in_words(whole.why, ms.size()); cap && *cap * 8 >= ms.size()) split_at = *(named = cap);
  const auto half = static_cast<std::ptrdiff_t>(split_at);
  members first(ms.begin(), ms.begin() + half), second(ms.begin() + half, ms.end());
  auto a = co_await send_once(first, false);
  auto b = co_await send_once(second, false);
  for (const auto* half : {&a, &b})
    if (half->refused && half->settled) spare += halving_spare(std::max(opts_->batch_size, rows_a_batch()));  // a row found, failed alone
  // The rest refused in other words naming the same count: words that follow the rows sent (TEI's
  // "batch size 68 > maximum allowed batch size 32"). A row's own refusal reads the same each time
  // it is sent, and so do fixed words (Azure's "The max number of inputs is 16"): those are
  // learned as halves are, once both parts are taken.
  if (named && a.taken && b.refused && !b.settled && b.why != whole.why && rows_cap_in_words(b.why, second.size()) == named)
    learn_rows(*named, second.size(), b.why);  // the rest, sent in parts of that many (resolve, below)
  switch (judge_halves(whole.status, whole.why, {a.refused, a.why, a.taken}, {b.refused, b.why, b.taken})) {
    case halving_verdict::not_a_rows_doing: {
      // Refused alike a level down too (confirming), or the first half's halves are: the request's.
      bool the_request = confirming;
      if (!the_request && !a.settled) the_request = co_await resolve(first, std::move(a), spare, true);  // not in a condition (g++ 12)
      if (the_request) {
        again(first, whole.why);
        again(second, whole.why);
        co_return true;
      }
      // Two rows' refusals that read alike: the first half was looked into; now the second.
      if (b.refused && !b.settled) co_await resolve(second, std::move(b), spare);
      co_return false;
    }
    case halving_verdict::too_large:
      if (!whole.local) learn_rows(std::max(first.size(), second.size()), ms.size(), whole.why);  // not the token limit's size
      co_return false;
    case halving_verdict::look_inside:
      break;
  }
  if (a.refused && !a.settled) co_await resolve(first, std::move(a), spare);
  if (b.refused && !b.settled) co_await resolve(second, std::move(b), spare);
  co_return false;
}

processor_factory make_batch_processor_factory(batch_processor_options opts) {
  if (!opts.call.url.fields().empty())
    throw setting_error("batch_url", "'" + redact_api_url(opts.call.url.text()) + "': it may not contain {fields}");
  if (opts.batch_size == 0) throw setting_error("batch_size", "must be at least 1");
  if (opts.body.empty()) {  // ip-api's batch, its profile of the template
    if (opts.item != ipapi::batch_item || !opts.echo.empty())
      throw setting_error("batch_item", "goes with a body template (ip-api's batch answers in order, checked by \"query\")");
    opts.body = batch_body::parse(ipapi::batch_body(opts.key_field), "batch_body");
    opts.echo = ipapi::batch_echo;
    opts.wide_start = false;  // 15 requests a minute: no burst of 16 before the first answer
    opts.text_keys = true;
  }
  if (!opts.call.shape.body.empty())
    throw setting_error("body", "is one item's request body: a batch request's is its batch body template");
  if (!opts.call.shape.fields().empty())
    throw setting_error("header", "a batch request is no one item's: its headers may not read {fields}");
  std::string why;
  if (!batch_item_pointer::parse(opts.item, &why))
    throw setting_error("batch_item", "'" + opts.item + "': " + why);
  if (opts.max_bytes == 0) throw setting_error("batch_bytes", "must be more than 0");
  if (!opts.call.limiter) opts.call.limiter = std::make_shared<rate_limiter>();
  auto shared = std::make_shared<const batch_processor_options>(std::move(opts));
  return [shared](const shard_info& s) -> std::unique_ptr<processor> {
    auto mine = shared;
    if (shared->call.max_connections) {  // this shard's part of max_connections
      auto o = std::make_shared<batch_processor_options>(*shared);
      o->call = *for_shard(std::make_shared<const processor_options>(shared->call), s.index);
      mine = std::move(o);
    }
    return std::make_unique<batch_processor>(s.executor, mine, s.figures, s.work_started, place_of(s));
  };
}

}  // namespace dibs::http
