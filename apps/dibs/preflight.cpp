#include "preflight.hpp"

#include <dibs/http/http_figures.hpp>

#include "adapters/http/processor/call_span.hpp"
#include <dibs/http/http_processor.hpp>

#include "exit_codes.hpp"
#include "preflight_verdicts.hpp"

#include "adapters/http/processor/api_body.hpp"
#include "adapters/http/processor/batch_items.hpp"
#include "adapters/http/budget/call_budget.hpp"
#include "adapters/http/processor/prefetched_answers.hpp"
#include "adapters/http/processor/request_builder.hpp"

#include <dibs/log.hpp>
#include "engine/src/claim_refusal.hpp"
#include "engine/src/uri_redact.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <future>
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

// One awaitable run to its end on an io_context of its own (the engine has not started).
template <class T>
T run_now(awaitable<T> a) {
  net::io_context ioc(1);
  auto fut = net::co_spawn(ioc, std::move(a), net::use_future);
  ioc.run();
  return fut.get();
}

// The run's own call path for the pre-flight's few calls: an http_processor of the run's options
// on an io_context of its own (the engine has not started), each call made as the run makes it
// (http_processor::ask: a rate slot, the budgets counted as it goes out, the stop signals).
struct call_path {
  // Its calls are counted with the run's (`figures`), once it is done: in figures of its own
  // meanwhile, so that it makes none of the run's shared state (the adaptive limit's, whose
  // ceiling is the shards' to set).
  call_path(const http::processor_options& call, counters* figures)
      : run_figures(figures), opts(std::make_shared<const http::processor_options>(call)),
        processor(ioc.get_executor(), opts, figures ? &own : nullptr) {}
  ~call_path() {
    if (const auto* h = own.extras.find<http::http_figures>(); h && run_figures)
      run_figures->extras.get<http::http_figures>().add_counts(*h);
  }
  http::http_processor::asked ask(const job& j, http::request req) {
    auto fut = net::co_spawn(ioc, processor.ask(j, std::move(req)), net::use_future);
    ioc.restart();
    // Until the answer is in, not until no work is left: the client's timers (a straggler's
    // sweep, an idle connection's) would hold the run back by up to a round trip and a half.
    while (fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready && ioc.run_one() > 0) {
    }
    return fut.get();
  }
  counters* run_figures;
  counters own;
  net::io_context ioc{1};
  std::shared_ptr<const http::processor_options> opts;
  http::http_processor processor;
};

// The budgets' reservations of claimed items end (given back, or lost).
void end_reservations(const http::processor_options& call, const std::vector<job>& jobs) {
  std::vector<std::string> keys;
  for (const auto& j : jobs) keys.push_back(http::budget_item_key(j.id, j.token));
  for (const auto& b : call.budgets) b->items_ended(keys);
}

// One call reserved in every budget (a claimed item's, or an unclaimed probe's); false (nothing
// kept) when one has no call left.
bool reserve_for_item(const http::processor_options& call) {
  std::size_t reserved = 0;
  for (const auto& b : call.budgets) {
    if (b->reserve_blocking(1) == 0) {
      log::info("pre-flight: ", b->what(), " has no call left; the API was not tried");
      for (std::size_t i = 0; i < reserved; ++i) call.budgets[i]->ended(1);
      return false;
    }
    ++reserved;
  }
  return true;
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

// A batch template's request with `j`'s element alone; nullopt (with a warning said) when none can be made.
std::optional<http::request> template_request_for(const job& j, const http::processor_options& call, const preflight_batch& batch) {
  auto element = batch.body.element(j, call.url.max_value_bytes());
  if (!element.error.empty()) {
    log::warn("pre-flight: item ", j.id, ": ", element.error, "; the API was not tried");
    return std::nullopt;
  }
  auto req = http::build_request(call.url, call.shape, job{}).req;  // a fixed URL, fixed headers
  req.method = http::request::verb::post;
  req.body = batch.body.join(std::vector<std::string_view>{element.text});
  req.content_type = "application/json";
  return req;
}

// The request the run would send for `sample`; nullopt (with a warning said) when none can be made.
std::optional<http::request> request_for(const pending_sample& sample, const http::processor_options& call,
                                         const preflight_batch& batch, const std::string& field) {
  if (batch.on) return template_request_for(job_of(sample, field), call, batch);
  auto built = http::build_request(call.url, call.shape, job_of(sample, field));
  if (!built.error.empty()) {
    log::warn("pre-flight: pending item ", sample.id, ": ", built.error, "; the API was not tried");
    return std::nullopt;
  }
  return std::move(built.req);
}

// Why a template's one-item answer has no answer for the item where `batch.item` points (or
// one naming another key than `key`, when known); nullopt when it has.
std::optional<std::string> item_not_in(const std::string& body, const preflight_batch& batch, const std::string& key) {
  const auto where = http::batch_item_pointer::parse(batch.item);
  if (!where) return std::nullopt;  // refused with the flags already
  simdjson::dom::parser parser;
  const std::vector<std::string> keys{key};
  const auto split = http::split_batch_items(parser, body, *where, 1, {key.empty() ? "" : batch.echo, &keys});
  const auto why = !split.error.empty() ? split.error : !split.items[0].ok ? split.items[0].text : std::string();
  if (why.empty()) return std::nullopt;
  return "--batch-item '" + batch.item + "' finds no item's answer in it (" + why + "): " + http::api_message(body, 120);
}

// One item's request, sent until its answer says something (a broken exchange is tried again);
// nullopt when a call budget has no call left for it (the API was not tried). `claimed`: the item
// the pre-flight claimed (its call counted as that item's, its reservation made already), its
// answer left in `answered` for the run to judge and write (it is paid for); null: an item not
// claimed (a done one), its call reserved and counted here.
std::optional<probe_verdict> probe(call_path& path, http::request req, const preflight_batch& batch, const std::string& flag,
                                   std::string& shown, const job* claimed = nullptr, http::response* answered = nullptr) {
  const auto& call = *path.opts;
  shown = shown_url(call.url, req.target);
  // An item not claimed (a done one, a batch's probe) reserves its call as a claim would, and
  // its reservation ends with the call, made or not.
  job probe_item;
  probe_item.id = "pre-flight probe";
  const job& item = claimed ? *claimed : probe_item;
  std::string key;  // the key the item's answer must name, where a batch's answers name theirs
  if (claimed && !batch.echo.empty()) key = http::echo_key(claimed->field(batch.key_field));
  struct reservation_end {
    const http::processor_options& call;
    std::string key;  // "" while nothing is reserved
    ~reservation_end() {
      if (key.empty()) return;
      for (const auto& b : call.budgets) b->items_ended({key});
    }
  } reservation{call, {}};
  if (!claimed) {
    if (!reserve_for_item(call)) return std::nullopt;
    reservation.key = http::budget_item_key(item.id, item.token);
  }
  for (int tries = 1;; ++tries) {
    // Made as the run makes its calls: a slot of the rate (the limit holds with the pre-flight in
    // it), counted in the budgets as the item's, a 429's pause held for the run.
    auto asked = path.ask(item, req);
    if (!asked.too_large.empty()) {  // the run fails the item, with no call, as here
      log::warn("pre-flight: ", asked.too_large);
      return std::nullopt;
    }
    if (asked.refused) {
      log::info("pre-flight: a budget has no room left for the call; the API was not tried", tries > 1 ? " again" : "");
      return std::nullopt;
    }
    auto& r = asked.r;
    if (!r.ec && call.no_data.by_status(r.status)) {  // the API's "no data for this key": it answers
      log::info("pre-flight: ", flag, " ", shown, " answered HTTP ", r.status, ", no data for this item (--no-data-on)");
      if (answered) *answered = std::move(r);
      return probe_verdict{};
    }
    // Under a budget the pre-flight's one reserved call is its only try.
    const auto expected = batch.on ? probe_answer::json : probe_answer::object;
    auto v = judge_probe(r, tries, call.budgets.empty() ? max_tries : 1, expected);
    if (v.what == probe_verdict::kind::again) {
      log::warn("pre-flight: ", shown, ": ", v.why, "; trying again");
      std::this_thread::sleep_for(std::chrono::milliseconds(500) * tries);
      continue;
    }
    if (v.what == probe_verdict::kind::refuse && tries > 1) v.why += " (" + std::to_string(tries) + " tries)";
    // A template's answer must hold the one item's where --batch-item says, or every batch of the
    // run would be paid for and asked again.
    if (v.what == probe_verdict::kind::go && batch.on && !r.ec && r.status >= 200 && r.status < 300)
      if (auto not_there = item_not_in(r.body, batch, key)) v = {probe_verdict::kind::refuse, *not_there};
    if (v.what == probe_verdict::kind::go && v.why.empty())
      log::info("pre-flight: ", flag, " ", shown, " answered ", r.ec ? r.describe() : "HTTP " + std::to_string(r.status));
    if (answered && !r.ec) *answered = std::move(r);
    return v;
  }
}

// Claimed items back to the store, unprocessed.
void release_now(admin_store& st, const std::vector<job>& jobs, const std::string& why) {
  if (jobs.empty()) return;
  std::vector<release_item> back;
  for (const auto& j : jobs) back.push_back(release_item{j.ref(), millis{0}, why, 0, true, true});
  try {
    run_now(st.release(std::move(back)));
  } catch (const std::exception& e) {  // left to their leases' expiry: the refusal is the news
    log::warn("pre-flight: the items it claimed could not be given back (", e.what(), "): claimable when their leases end");
  }
}

// ... and their reservations ended.
void release_claimed(admin_store& st, const http::processor_options& call, const std::vector<job>& jobs,
                     const std::string& why) {
  release_now(st, jobs, why);
  end_reservations(call, jobs);
}
}  // namespace

void give_back_preclaimed(admin_store& st, const http::processor_options& call, const std::vector<job>& jobs) {
  release_claimed(st, call, jobs, "the run stopped before it took the item");
}

void run_preflight(admin_store& st, const http::processor_options& call, const preflight_batch& batch, const std::string& field,
                   const std::string& flag, const claim_request& claim_as, preclaimed_store& into,
                   counters* figures) {
  // A few pending items read first: the field's check names every field a document has.
  const auto samples = st.sample_pending_items(batch.on ? 1 : max_items);
  if (samples.empty()) {
    log::info("pre-flight: nothing pending, nothing to check");
    return;
  }
  if (auto refusal = missing_field_refusal(field, samples.front(), flag); !refusal.empty())
    throw std::invalid_argument(refusal + " (--no-preflight skips this check)");
  call_path path(call, figures);
  std::string shown;
  const bool templated = batch.on;
  // Each item asked is claimed first, as the run claims: its answer is bought for this run alone
  // (several processes starting at once ask different items), and the run writes it. A batch
  // asks one item, in a batch of its own (ip-api's too: its profile of the template).
  std::vector<job> claimed;
  std::vector<probe_verdict> verdicts;
  std::optional<probe_verdict> done;
  try {
    for (std::size_t asked = 0; asked < (templated ? 1 : max_items); ++asked) {
      if (!verdicts.empty() && !ask_another(verdicts)) break;
      claim_request one = claim_as;
      one.max = 1;
      std::vector<job> got;
      try {
        got = run_now(st.claim(one));
      } catch (const store_refused& e) {  // as the run's own claims would be: again and again
        throw store_denied(claim_refusal(e.what()));
      }
      if (got.empty()) break;  // nothing claimable now (other workers hold the rest)
      bool reserved = false;
      try {
        reserved = reserve_for_item(call);
      } catch (...) {  // the store's budget out of reach: the item goes back as it came
        release_now(st, got, "the call budget could not be read");
        throw;
      }
      if (!reserved) {
        release_now(st, got, "the call budget has no call left for it");
        break;
      }
      claimed.push_back(std::move(got.front()));
      const job& j = claimed.back();
      const auto* source = j.field(field);
      const bool no_value = !source || source->st == job_field::state::missing ||
                            (source->st == job_field::state::string && source->value.empty());
      if (no_value) {
        if (verdicts.empty()) log::warn("pre-flight: item ", j.id, " has no text in '", field, "'; the API was not tried");
        continue;  // the run fails it as it would any such item
      }
      std::optional<http::request> req;
      if (templated) {
        req = template_request_for(j, call, batch);
      } else if (auto built = http::build_request(call.url, call.shape, j); built.error.empty()) {
        req = std::move(built.req);
      } else {
        log::warn("pre-flight: item ", j.id, ": ", built.error, "; the API was not tried");
      }
      if (!req) continue;  // the run fails the item as it would any such item
      http::response answered;
      auto v = probe(path, std::move(*req), batch, flag, shown, &j, &answered);
      if (!v) break;  // no call left to ask with
      // Paid for: the run takes it for this item rather than asking again.
      if ((answered.status != 0) && call.prefetched)
        call.prefetched->keep(templated ? http::batch_row_identity(j) : http::request_identity(call.url, call.shape, j),
                              std::move(answered));
      verdicts.push_back(std::move(*v));
      // "Not found": an item already done (the path worked for it) tells a wrong path from items
      // the API has nothing for; without one, other pending items are asked.
      if (ask_another(verdicts) && verdicts.size() == 1)
        if (const auto finished = st.sample_done(); finished && finished->source.st == job_field::state::string)
          if (const auto again = request_for(*finished, call, batch, field)) {
            std::string shown_done;
            done = probe(path, *again, batch, flag, shown_done);  // nullopt: no call left to ask it
            break;
          }
    }
  } catch (...) {
    release_claimed(st, call, claimed, "the pre-flight ended early");
    throw;
  }
  // The account can make no more calls: the items go back as they came, the command ends with
  // its own exit status.
  for (const auto* v : {verdicts.empty() ? nullptr : &verdicts.back(), done ? &*done : nullptr})
    if (v && v->account_spent) {
      release_claimed(st, call, claimed, "the API says the account can make no more calls");
      throw account_spent_error("the API says " + v->why);
    }
  const auto decision = verdicts.empty() ? preflight_decision{} : judge_probes(verdicts, done);
  if (decision.refuse) {
    // Given back as claimed: the answers say nothing of these items, only of the run's flags.
    release_claimed(st, call, claimed, "the pre-flight refused the run");
    throw std::invalid_argument("the API can't be used: " + flag + " " + shown + ": " + decision.why +
                                " (--no-preflight skips this check)");
  }
  if (!decision.why.empty()) log::warn("pre-flight: ", flag, " ", shown, " answered ", decision.why);
  // Renewed as they go to the run: the pre-flight's calls may have taken a good part of the lease.
  if (claimed.empty()) return;
  std::vector<renewal> renewals;
  for (const auto& j : claimed) renewals.push_back(renewal{j.ref()});
  try {
    const auto r = run_now(st.renew(std::move(renewals), claim_as.lease));
    std::vector<job> kept, lost;
    std::size_t applied = 0;
    for (auto& j : claimed) {
      if (std::find(r.lost.begin(), r.lost.end(), j.id) != r.lost.end()) {
        lost.push_back(std::move(j));
        continue;
      }
      if (applied < r.until.size()) j.until = r.until[applied];
      ++applied;
      kept.push_back(std::move(j));
    }
    end_reservations(call, lost);
    for (const auto& j : lost)  // another worker's now: its answer is no item's of this run
      if (call.prefetched)
        call.prefetched->take(templated ? http::batch_row_identity(j) : http::request_identity(call.url, call.shape, j));
    into.hand_over(std::move(kept));
  } catch (const std::exception&) {  // the store is out of reach: the run finds out, leases as they are
    into.hand_over(std::move(claimed));
  }
}

preflight_batch preflight_batch_of(const api_flags& api, const std::string& source_field) {
  if (!api.batch()) return {};
  auto shape = api.batch_request(source_field);
  return {true, std::move(shape.body), std::move(shape.item), std::move(shape.echo),
          api.batch_key.empty() ? source_field : api.batch_key};
}

}  // namespace dibs::cli
