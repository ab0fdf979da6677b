// A batch's answer handed to its rows (batch_processor.hpp): one verdict for all when the exchange
// failed or the account is spent, else each row its own answer, split back by the item pointer
// (and checked by the key each answer names, where it names one), never shifted.
#include "batch_members.hpp"

#include "api_body.hpp"
#include "answer_mapping.hpp"
#include "json_check.hpp"
#include "no_data_verdict.hpp"
#include "profiles/ipapi/ipapi_profile.hpp"

#include <dibs/http/exchange_policy.hpp>

namespace dibs::http {

void batch_processor::settle_all(members& ms, const response& r, std::chrono::steady_clock::time_point sent) {
  const auto& o = opts_->call;
  bool api_pace = false;
  const auto stop_for =
      honor_stop_signals(*o.limiter, o.url.host(), r, o.max_retry_after, figures_, o.adaptive.has_value(), sent, &api_pace);
  tell_limit_of_pause(client_, origin_, r, stop_for, api_pace, o.limiter->tokens().active(), sent);
  auto hand = [](member& m, outcome out) {
    m.result = std::move(out);
    m.wake.cancel();
  };
  auto backoff = [&](const member& m) { return full_jitter_backoff(m.attempts, o.backoff_base, o.backoff_max, rng_); };

  // The account can make no more calls: the run stops, each member back as it came (or, with no
  // run to stop, failed with the API's words).
  if (!r.ec)
    if (const auto code = account_spent_code(r.status, r.body); !code.empty()) {
      const auto said = "the account can make no more calls (" + code + "): " + with_api_message(r.describe(), r.body);
      const bool stopping = o.account_spent && o.account_spent(said);
      for (auto& m : ms)
        hand(*m, stopping ? outcome::paced_retry(std::chrono::milliseconds{0}, said, r.status) : outcome::fail(said, r.status));
      return;
    }
  // The exchange failed: one verdict for all, each retry with its member's own backoff (never
  // before the API's stop signal, which the verdict already holds).
  if (auto verdict = judge_exchange(r, o.http, {}, stop_for, api_pace)) {
    for (auto& m : ms) {
      auto out = *verdict;
      if (out.k == outcome::kind::retry) out.after = std::max(out.after, backoff(*m));
      hand(*m, std::move(out));
    }
    return;
  }
  settle_items(ms, r);
}

void batch_processor::settle_items(members& ms, const response& r) {
  const auto& o = opts_->call;
  std::vector<std::string> keys;
  if (!opts_->echo.empty())
    for (const auto& m : ms) keys.push_back(m->key);
  auto split = split_batch_items(parser_->dom, r.body, *parser_->item, ms.size(), {opts_->echo, &keys});
  // A count or an index that is not each item's once: none is believed, every item is asked
  // again (in a new batch), and the connection, which may be one answer behind, is closed. So
  // is it when an answer names another item's key (that item alone is asked again).
  if (split.out_of_step) client_.drop_idle(origin_);
  for (std::size_t i = 0; i < ms.size(); ++i) {
    auto& m = *ms[i];
    const auto backoff = full_jitter_backoff(m.attempts, o.backoff_base, o.backoff_max, rng_);
    if (!split.error.empty()) m.result = outcome::retry(backoff, r.describe() + ": " + split.error, r.status);
    else if (!split.items[i].ok) m.result = outcome::retry(backoff, r.describe() + ": " + split.items[i].text, r.status);
    else m.result = item_outcome(std::move(split.items[i].text), r.status);
    m.wake.cancel();
  }
}

outcome batch_processor::item_outcome(std::string answer, int status) {
  const auto& o = opts_->call;
  if (o.status_field_check) {  // ip-api's "status": "fail" is its "no data", in any batch's shape
    std::string probe = answer;  // the check reserves its padding in the text it reads
    const auto check = check_json_object(parser_->inner, probe, 64, ipapi::members());
    if (!check.ok) return outcome::fail("the batch answer for this item is bad: " + check.error, status);
    if (auto no_data = ipapi::no_data_reason(check)) {
      if (o.no_data_fails) return outcome::fail(std::move(*no_data), status);
      return outcome::no_data_answer(std::move(answer), std::move(*no_data), status);
    }
  }
  if (o.no_data.members.empty() && o.map.empty()) return outcome::done(std::move(answer));
  simdjson::dom::element doc;
  if (parser_->dom.parse(answer).get(doc)) return outcome::done(std::move(answer));  // written by simdjson: never
  if (!o.no_data.members.empty())
    if (auto no_data = no_data_by_member(o.no_data, doc)) {
      if (o.no_data_fails) return outcome::fail(std::move(*no_data), status);
      return outcome::no_data_answer(std::move(answer), std::move(*no_data), status);
    }
  if (!o.map.empty()) return outcome::done(mapped_object(o.map, doc));
  return outcome::done(std::move(answer));
}

}  // namespace dibs::http
