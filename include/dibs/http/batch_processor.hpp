// Batch requests: one `POST` for up to `batch_size` claimed items, its body a template
// (`body`, batch_body.hpp) whose array is written once per item, the answer split back by `item`
// (batch_items.hpp: "/data/{i}/embedding"), never shifted; where each answer names its item's key
// in a member (`echo`: ip-api's "query"), an answer naming another key is not that item's.
// ip-api's `/batch` is one such template (the CLI's profile: `[{ip}]`, "/{i}", "query").
// A batch the API refuses as a whole (400, 413, 422) is halved until the item it refuses fails
// alone, with its words (a refused request a halving: log2 of the batch's size more at most;
// rows still refused together after 2 log2(n) + 2 more requests are asked again in other
// batches); each answer goes through the run's no-data rules, ip-api's status check and its map
// as a single answer does. Its answer may be a row's max_body times the batch's rows.
//
// The pipelines of a shard that call process() at about the same time share one open batch.
// The first to join leads it: it waits `linger` (or until the batch is full), then for the rate
// limiter's slot while more items join, closes the batch, sends it, and hands every member its
// own outcome. The others only wait for theirs. A batch is one request to the rate limiter.
//
// Outcomes per item: done, failed for no data, retried for an answer not found or naming another
// key. A failed exchange (timeout, 429, 5xx, 4xx, bad JSON) gives every item of the batch the
// outcome one item would get, with its own backoff.
// A leader cancelled (shutdown, max_processing) hands its members a retry, so none waits for
// an answer that will not come.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/http/batch_body.hpp>
#include <dibs/http/http_processor.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace dibs::http {

struct batch_processor_options {
  // url: the batch endpoint (no {field}); http, checks, backoff, limiter; shape: its headers
  // only (fixed ones, an API key: a batch is no one item's, so none reads a field).
  processor_options call;
  std::string key_field = dibs::ipapi::source_field;  // the item's key, which `echo` names
  std::size_t batch_size = 100;
  // Where batches may grow to (0 or <= batch_size: they stay at batch_size). Once requests are
  // scarce (batch_processor::requests_scarce: against an API that serves every request at once,
  // larger batches only cost a short run time), a batch of the
  // current size sent full and taken whole lets one batch (a trial) hold up to this many, doubled
  // while its answer stays under grow_answer_bytes, its body under the request's byte cap and the
  // token limit, and its time far under the timeout; once the trial is taken whole, every later
  // batch does: an API that serves one request at a time pays its fixed cost a request less
  // often. A refused trial is split and its size learned (learned_rows) as any batch's is, and
  // growth never passes a learned size; a trial that times out (or a 500/502/504) ends growth at
  // the size before it. One trial at a time: a size the API refuses costs the trial's request
  // and, past twice the size it takes, the rest's (2 refused requests, not one a batch).
  std::size_t grow_to = 0;
  std::size_t grow_answer_bytes = 8u << 20;
  std::chrono::milliseconds linger{20};  // how long a batch waits for more items before it is sent
  // The body template, where each item's answer stands in the answer, and the member of that
  // element which names the item's key ("": none does). No body: ip-api's batch (`[{key_field}]`,
  // "/{i}", "query", text keys, and no wide start).
  batch_body body;
  std::string item = "/{i}";
  std::string echo;
  // Slow start begins at 16 requests, as for an endpoint built to be asked many rows at once; off
  // for one whose requests are counted a few a minute (ip-api's batch: 15).
  bool wide_start = true;
  // Each item's key (key_field) must be a non-empty string, else the item fails with no call
  // (ip-api's: an address or a host name).
  bool text_keys = false;
  std::size_t max_bytes = 1u << 20;  // a batch closes before its body would pass this
  // The most rows a batch the API took after refusing a larger one whole (0: not refused yet):
  // learned by any shard, held by all.
  std::shared_ptr<std::atomic<std::size_t>> learned_rows = std::make_shared<std::atomic<std::size_t>>(0);
  // The size batches have grown to (0: batch_size), and the trial's (its size times 2, plus 1 once a
  // batch tries it; 0: none), shared by every shard as learned_rows is.
  std::shared_ptr<std::atomic<std::size_t>> grown_rows = std::make_shared<std::atomic<std::size_t>>(0);
  std::shared_ptr<std::atomic<std::size_t>> trial_rows = std::make_shared<std::atomic<std::size_t>>(0);
  // A batch waited for the request rate (--rate, the API's stated quota): requests are scarce,
  // and growth pays (judge_growth), as where the API serves fewer than were sent.
  std::shared_ptr<std::atomic<bool>> rate_held = std::make_shared<std::atomic<bool>>(false);
};

class batch_processor final : public processor {
 public:
  // `work_started`: called for every member right before the batch is sent (may be empty).
  batch_processor(net::any_io_executor ex, std::shared_ptr<const batch_processor_options> opts,
                  counters* figures = nullptr, std::function<void(const job&)> work_started = {},
                  shard_place place = {});
  ~batch_processor() override;

  awaitable<outcome> process(job j) override;
  // max_processing times the request, not the linger and the wait for a rate slot.
  bool reports_work_start() const override { return static_cast<bool>(work_started_); }
  // The adaptive limit on batch requests in flight, in items (each request carries a batch).
  std::size_t capacity() const override;
  // The limit leaves this shard no batch request of its own (client::parked).
  bool parked() const override { return client_.parked(origin_); }
  void set_ceiling(std::size_t ceiling) override;
  void concurrency_changed(std::size_t shard_part, std::size_t whole) override;
  void dispatch_ended() override { client_.leave(origin_); }

  client& http_client() { return client_; }

 private:
  struct member;
  struct batch;
  using members = std::vector<std::shared_ptr<member>>;
  awaitable<void> lead(batch& b);  // `b` outlives the call: process() holds it
  struct sent_batch {
    bool refused = false;  // refused whole (400, 413, 422), or too large for the token limit
    bool settled = false;  // its one row was handed the refusal; else the caller halves it
    std::string why;
    int status = 0;
    bool taken = false;  // answered 2xx
    bool local = false;  // refused here (too large for the token limit), never sent
    // For growth: the rows sent, every one answered (none asked again), the answer's size and
    // time, and a failure a larger batch may cause (a timeout, 500, 502, 504).
    std::size_t rows = 0;
    bool all_answered = false;
    std::size_t answer_bytes = 0;
    std::chrono::steady_clock::duration took{};
    bool size_failure = false;
  };
  // Sends one request for `ms` and hands each its outcome, unless the API refused it whole.
  awaitable<sent_batch> send_once(members ms, bool slot_taken);
  // `ms`, refused whole, halved (two of `spare` a halving; with none left, each asked again later).
  // `confirming`: its halves refused alike say the request, not its rows, was refused (the
  // batch it is a half of was refused alike). True when they did: every row asked again.
  awaitable<bool> resolve(members& ms, sent_batch whole, std::size_t& spare, bool confirming = false);
  // `ms` in requests of `rows` rows each (0: rows_a_batch()), one after the other.
  awaitable<void> send_in_parts(members ms, bool slot_taken, std::size_t& spare, std::size_t rows = 0);
  std::size_t rows_a_batch() const;
  // The API takes `took` rows a request (it refused `refused` in `why`): every batch from now on.
  void learn_rows(std::size_t took, std::size_t refused, const std::string& why);
  // What batch `b`'s one request (`sent`) says of its size: a trial taken whole sets the size,
  // a trial failed for its size ends growth, and a full batch of the size taken whole lets a
  // trial of as many as trial_size allows follow (grow_to), once requests are scarce
  // (requests_scarce).
  void judge_growth(batch& b, const sent_batch& sent);
  // How many rows a trial after a batch of `rows` taken whole (its rows' elements `body_bytes`,
  // its answer `answer_bytes`, in `took`) may hold: doubled while the bounds hold, up to grow_to
  // (`rows`: no trial).
  std::size_t trial_size(std::size_t rows, std::size_t body_bytes, std::size_t answer_bytes,
                         std::chrono::steady_clock::duration took) const;
  // The request rate's slot for `host` (wait_for_slot); a wait for it marks requests scarce
  // (rate_held).
  awaitable<void> rate_slot(const std::string& host);
  // More rows a request pay only where requests are what holds the rows back: the API serves
  // fewer at once than were sent (client::requests_scarce), or the request rate held a batch.
  bool requests_scarce() const;
  // A trial's size for the batch being opened (0: none waits).
  std::size_t claim_trial();
  static std::size_t halving_spare(std::size_t rows);
  // How long a trial's batch waits for its rows: ten lingers, 200 ms at least.
  static constexpr int trial_linger_factor = 10;
  static constexpr std::chrono::milliseconds trial_linger_least{200};
  bool would_overflow(std::size_t body_bytes) const;
  void settle_all(members& ms, const response& r, std::chrono::steady_clock::time_point sent);
  // Each item's answer split from the batch's.
  void settle_items(members& ms, const response& r);
  outcome item_outcome(std::string answer, int status);
  void close(batch& b);  // no more members join

  std::shared_ptr<const batch_processor_options> opts_;
  http_figures* figures_;  // the run's, kept in the engine's counters (null without them)
  client client_;
  origin origin_;
  std::shared_ptr<batch> open_;  // the batch new items join
  struct json_parser;
  std::unique_ptr<json_parser> parser_;
  std::mt19937_64 rng_;
  std::function<void(const job&)> work_started_;
};

// Throws std::invalid_argument when the URL has placeholders or the batch size is 0.
processor_factory make_batch_processor_factory(batch_processor_options opts);

}  // namespace dibs::http
