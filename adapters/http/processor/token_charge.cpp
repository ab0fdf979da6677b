#include "token_charge.hpp"

#include "adapters/http/rate/provider_headers.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace dibs::http {

void read_token_headers(token_meter& m, const response& r, std::chrono::steady_clock::time_point sent, bool usage_said) {
  if (r.ec) return;
  const auto said = read_provider_limits(r.headers, std::chrono::system_clock::now());
  // Input and output held apart: read at the requests' mix, each bucket's room in whole tokens
  // (held as the tightest of the two, an API whose output limit is a fifth of its input one was
  // held to a fifth of its requests).
  std::optional<provider_bucket> whole;
  if (said.input_tokens && said.output_tokens) {
    whole = whole_tokens_at_mix(*said.input_tokens, *said.output_tokens, m.input_share());
    m.parts_limits(said.input_tokens->limit.value_or(0), said.output_tokens->limit.value_or(0));
  }
  if (!whole) whole = said.tokens;
  if (whole) m.read(whole->remaining, whole->limit, sent, token_meter::clock::now());
  else if (!usage_said && r.status >= 200 && r.status < 300)
    m.answered_unmetered();  // an answer with neither a limit nor a usage: no LLM API, it seems
}

void token_ticket::settle_used(std::int64_t used, bool answered) {
  auto* m = std::exchange(meter_, nullptr);
  if (!m) return;
  m->settle(a_, used, token_meter::clock::now(), answered);
  if (auto* s = std::exchange(shared_, nullptr)) s->settle(a_.tokens, used);
}

void token_ticket::written(bool reused) {
  if (!meter_) return;
  written_ = token_meter::clock::now();
  meter_->written(a_, written_, reused);
}

token_usage token_ticket::settle(const response& r, std::size_t body_bytes) {
  auto* m = meter_;
  if (!m) return {};
  if (r.ec) {
    // Never written (refused by a budget, no connection): nothing reached the API. Written and
    // then lost: the API may have charged it.
    const bool maybe_charged = r.stage == "read" || r.stage == "write";
    settle_used(maybe_charged ? -1 : 0);
    return {};
  }
  token_usage used;
  if (r.status >= 200 && r.status < 300) {
    used = answer_usage(r.body);
    if (used.known()) m->estimator.learn(body_bytes, used);
    settle_used(used.known() ? used.total() : -1, true);
  } else {
    settle_used(0, true);
  }
  // The requests written after this one (and those not written yet) the server may not have seen.
  read_token_headers(*m, r, written_ == token_meter::clock::time_point{} ? a_.at : written_, used.known());
  return used;
}

std::optional<std::int64_t> token_charge(token_meter& m, std::size_t body_bytes, std::optional<std::int64_t> max_out) {
  if (!m.watching()) return std::nullopt;
  const auto charge = m.estimator.estimate(body_bytes, max_out);
  m.note_charge(charge, m.estimator.estimate(0, max_out));  // its output part: no prompt
  return charge;
}

std::optional<std::int64_t> token_charge(token_meter& m, const std::string& body) {
  if (!m.watching()) return std::nullopt;  // the body is not read for an API metered in calls
  return token_charge(m, body.size(), max_output_tokens(body));
}

std::int64_t least_token_charge(std::size_t body_bytes, std::optional<std::int64_t> max_out) {
  return static_cast<std::int64_t>(body_bytes / 4) + max_out.value_or(0);
}

std::int64_t least_token_charge(const std::string& body) { return least_token_charge(body.size(), max_output_tokens(body)); }

std::string never_admitted(const token_meter& m, std::size_t body_bytes, std::optional<std::int64_t> max_out) {
  if (!m.active()) return {};
  if (const auto least = least_token_charge(body_bytes, max_out); least > m.capacity()) return too_large_for_limit(least, m.capacity());
  if (const auto out = m.output_capacity(); out > 0 && max_out && *max_out > out)
    return "not sent: the request asks for up to " + std::to_string(*max_out) + " output tokens (its max_tokens), more than the API's whole limit of " +
           std::to_string(out) + " output tokens a minute: it could never be admitted";
  if (const auto in = m.input_capacity(); in > 0)
    if (const auto prompt = least_token_charge(body_bytes, std::nullopt); prompt > in)
      return "not sent: the request's prompt needs at least " + std::to_string(prompt) + " input tokens, more than the API's whole limit of " +
             std::to_string(in) + " input tokens a minute: it could never be admitted";
  return {};
}

std::string too_large_for_limit(std::int64_t charge, std::int64_t capacity) {
  return "not sent: the request needs at least " + std::to_string(charge) + " tokens (its max_tokens and its prompt), " +
         "more than the API's whole limit of " + std::to_string(capacity) + " tokens a minute: it could never be admitted";
}

awaitable<token_ticket> take_tokens(token_meter& m, std::int64_t charge, shared_tokens* shared) {
  for (;;) {
    const auto now = token_meter::clock::now();
    auto t = m.try_take(charge, now);
    if (t.ticket) {
      token_ticket ticket(&m, *t.ticket);  // given back whole if the wait below is cancelled
      if (!shared) co_return std::move(ticket);
      co_await shared->take(t.ticket->tokens);
      ticket.taken_from(shared);
      co_return std::move(ticket);
    }
    // Tried again when the bucket should hold them, or within a second (a reading may free room).
    net::steady_timer timer(co_await net::this_coro::executor, std::min(t.retry_at, now + std::chrono::seconds(1)));
    co_await timer.async_wait(net::use_awaitable);
  }
}

}  // namespace dibs::http
