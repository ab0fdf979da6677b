// Batch lookups: one `POST` for up to `batch_size` claimed items (ip-api's `/batch` takes 100),
// answers matched to items by position and checked against their "query".
//
// The pipelines of a shard that call process() at about the same time share one open batch.
// The first to join leads it: it waits `linger` (or until the batch is full), then for the rate
// limiter's slot while more items join, closes the batch, sends it, and hands every member its
// own outcome. The others only wait for theirs. A batch is one request to the rate limiter.
//
// Outcomes per item: done, failed for "status":"fail" (no data), retried for an element that is
// not an object or names another key. A failed exchange (timeout, 429, 5xx, 4xx, bad JSON) gives
// every item of the batch the outcome one item would get, with its own backoff.
// A leader cancelled (shutdown, max_processing) hands its members a retry, so none waits for
// an answer that will not come.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/http/http_processor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace dibs::http {

struct batch_processor_options {
  // url: the batch endpoint (no {field}); http, checks, backoff, limiter; shape: its headers
  // only (fixed ones, an API key: a batch is no one item's, so none reads a field), the body is
  // the keys' JSON array.
  processor_options call;
  std::string key_field = dibs::ipapi::source_field;
  std::size_t batch_size = 100;
  std::chrono::milliseconds linger{20};  // how long a batch waits for more items before it is sent
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
  awaitable<void> lead(batch& b);  // `b` outlives the call: process() holds it
  void settle_all(batch& b, const std::vector<std::string>& keys, const response& r, std::chrono::steady_clock::time_point sent);
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
