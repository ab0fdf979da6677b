#include <dibs/engine.hpp>
#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>
#include "worker_id.hpp"

#include "shard.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>


#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace dibs {

std::size_t engine_config::effective_shards() const {
  if (shards) return shards;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  // Eight processes of 125 pipelines on one store: with a shard per core each claims half
  // batches, and the server runs twice the statements (bench/results/scale.md).
  const std::size_t full = claim_batch ? concurrency / (2 * claim_batch) : cores;
  return std::clamp<std::size_t>(full, 1, cores);
}

void engine_config::validate() const {
  // Named as the library names them (the fields above); the CLI says its flags instead.
  auto bad = [](const char* setting, const std::string& problem) { throw setting_error(setting, problem); };
  if (concurrency == 0) bad("concurrency", "must be at least 1");
  if (claim_batch == 0) bad("claim_batch", "must be at least 1");
  if (effective_shards() > concurrency) bad("shards", "must not exceed the concurrency");
  if (effective_shards() > 1024) bad("shards", "must be at most 1024");
  if (lease.count() < 10) bad("lease", "must be at least 10 ms");
  if (grace.count() < 0) bad("grace", "must not be negative");
  if (max_attempts < 1) bad("max_attempts", "must be at least 1");
  if (max_processing.count() < 0) bad("max_processing", "must not be negative");
  if (flush_linger.count() < 0) bad("flush_linger", "must not be negative");
  if (flush_linger_running.count() < 0) bad("flush_linger_running", "must not be negative");
  if (write_max_bytes < 1024) bad("write_max_bytes", "must be at least 1 KiB");
  if (shutdown_timeout.count() < 0) bad("shutdown_timeout", "must not be negative");
  if (circuit_probe_min.count() < 1) bad("circuit_probe_min", "must be at least 1 ms");
  if (circuit_probe_max < circuit_probe_min) bad("circuit_probe_max", "must not be below circuit_probe_min");
  if (idle_backoff_min.count() < 1) bad("idle_backoff_min", "must be at least 1 ms");
  if (idle_backoff_max < idle_backoff_min) bad("idle_backoff_max", "must not be below idle_backoff_min");
  if (!(trace_sample_ratio >= 0.0 && trace_sample_ratio <= 1.0)) bad("trace_sample_ratio", "must be between 0 and 1");
  if (!worker_prefix.empty())
    if (auto problem = worker_id_problem(worker_prefix); !problem.empty()) bad("worker_prefix", problem);
}

struct engine::run_state {
  std::vector<std::unique_ptr<shard>> shards;
  std::vector<std::thread> threads;
  std::chrono::steady_clock::time_point started{};
  std::atomic<std::chrono::steady_clock::rep> ended{0};
  std::atomic<bool> finished{false};
  std::atomic<bool> started_flag{false};  // `shards` is complete: wake() and pause() may read it
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> paused{false};
  std::atomic<std::size_t> running{0};
  std::atomic<std::size_t> undrained{0};  // shards that ended for another reason than "nothing left"
  std::atomic<std::size_t> concurrency{0};  // the process's pipelines now (set_concurrency)
  std::mutex mutex;  // guards on_finished and the moment `finished` turns true, and denied
  std::vector<std::function<void()>> on_finished;
  std::optional<std::string> denied;
  std::unique_ptr<detail::run_completion> completion;  // async_run's handler, until the end
  bool on_caller = false;  // one shard on the caller's io_context (set before any shard starts)
  std::atomic<std::int64_t> calling_shards{0};  // shard_context::calling_shards
};

engine::engine(engine_config cfg, std::shared_ptr<store> st, processor_factory factory)
    : cfg_(std::move(cfg)), store_(std::move(st)), factory_(std::move(factory)), run_(std::make_unique<run_state>()) {
  cfg_.validate();
  if (!store_) throw std::invalid_argument("engine: no store");
  if (!factory_) throw std::invalid_argument("engine: no processor");
  if (cfg_.worker_prefix.empty()) cfg_.worker_prefix = default_worker_prefix();
  run_->concurrency = cfg_.concurrency;
  if (cfg_.traces) cfg_.traces->count_in(counters_.extras.get<span_figures>());
}

engine::~engine() {
  if (!run_->threads.empty()) {
    stop_now();
    wait();
  } else if (run_->started_flag && !run_->finished) {
    log::error("engine destroyed while running on the caller's io_context: stop() it and await join() first");
  }
}

shard_context engine::context() {
  return shard_context{cfg_, *store_, counters_, factory_, [this](bool drained) { shard_ended(drained); },
                       [this](const std::string& why) { store_denied(why); }, run_->calling_shards};
}

void engine::store_denied(const std::string& why) {
  {
    std::lock_guard lock(run_->mutex);
    if (run_->denied) return;
    run_->denied = why;
  }
  log::error("the run ends: ", why);
  stop_now();
}

std::optional<std::string> engine::denied() const {
  std::lock_guard lock(run_->mutex);
  return run_->denied;
}

bool engine::paused() const { return run_->paused.load(); }
bool engine::finished() const { return run_->finished.load(); }
bool engine::stop_requested() const { return run_->stop_requested.load(); }
bool engine::drained() const { return run_->finished.load() && run_->undrained.load() == 0; }

namespace {
// A shard's share of the process-wide concurrency; the first shards take the remainder.
std::size_t share_of(std::size_t total, std::size_t shards, std::size_t index) {
  return total / shards + (index < total % shards ? 1 : 0);
}
}  // namespace

void engine::start() {
  async_run([](run_summary) {});
}

void engine::start_on(net::io_context& ioc) {
  async_run(ioc, [](run_summary) {});
}

net::any_io_executor engine::fallback_executor(net::io_context* ioc) {
  if (ioc) return ioc->get_executor();
  return net::system_executor();
}

void engine::launch(net::io_context* ioc, std::unique_ptr<detail::run_completion> done) {
  if (!run_->shards.empty()) throw std::logic_error("engine: started twice");
  run_->completion = std::move(done);
  run_->on_caller = ioc != nullptr;
  // On the caller's io_context: one shard, with every pipeline.
  const auto n = ioc ? 1 : cfg_.effective_shards();
  const std::size_t total = run_->concurrency.load();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = share_of(total, n, i);
    run_->shards.push_back(std::make_unique<shard>(context(), i, c, total, cfg_.worker_prefix + "-" + std::to_string(i), ioc));
  }
  run_->started = std::chrono::steady_clock::now();
  run_->running = n;
  if (run_->paused)
    for (auto& s : run_->shards) s->pause(true);
  if (ioc)
    run_->shards.front()->spawn();
  else
    for (auto& s : run_->shards) run_->threads.emplace_back([sh = s.get()] { sh->run(); });
  run_->started_flag.store(true, std::memory_order_release);
}

void engine::pause() {
  run_->paused = true;
  if (!run_->started_flag.load(std::memory_order_acquire)) return;  // start() applies it
  for (auto& s : run_->shards) s->pause(true);
}

void engine::resume() {
  run_->paused = false;
  if (!run_->started_flag.load(std::memory_order_acquire)) return;
  for (auto& s : run_->shards) s->pause(false);
}

void engine::set_concurrency(std::size_t n) {
  const std::size_t shards = run_->started_flag.load(std::memory_order_acquire) ? run_->shards.size() : cfg_.effective_shards();
  if (n < shards)
    throw std::invalid_argument("concurrency must be at least the number of shards (" + std::to_string(shards) + ")");
  if (n > 1'000'000) throw std::invalid_argument("concurrency must be at most 1000000");
  run_->concurrency = n;
  if (!run_->started_flag.load(std::memory_order_acquire)) return;  // start() splits it
  for (std::size_t i = 0; i < run_->shards.size(); ++i) run_->shards[i]->set_concurrency(share_of(n, run_->shards.size(), i), n);
  log::info("concurrency: ", n, " pipelines from now on");
}

std::size_t engine::concurrency() const { return run_->concurrency.load(); }

void engine::set_rate_control(std::shared_ptr<rate_control> rate) { rate_ = std::move(rate); }

void engine::set_rate(double per_second) {
  if (!rate_) throw std::logic_error("this engine's processor has no request rate to change");
  rate_->set_per_second(per_second);
  if (per_second > 0)
    log::info("rate: ", per_second, " requests per second from now on");
  else
    log::info("rate: no limit from now on");
}

std::optional<double> engine::rate_per_second() const {
  if (!rate_) return std::nullopt;
  const double r = rate_->per_second();
  if (r > 0) return r;
  return std::nullopt;
}

std::vector<shard_view> engine::shards() const {
  std::vector<shard_view> out;
  if (!run_->started_flag.load(std::memory_order_acquire)) return out;
  for (const auto& s : run_->shards) {
    shard_view v;
    v.by = s->worker_id();
    v.in_flight = s->in_flight_now();
    v.held = s->held_now();
    v.concurrency = s->concurrency_now();
    v.breaker = to_string(s->breaker_now());
    v.breaker_reason = s->breaker_reason_now();
    out.push_back(std::move(v));
  }
  return out;
}

awaitable<void> engine::join() {
  auto ex = co_await net::this_coro::executor;
  auto timer = std::make_shared<net::steady_timer>(ex, net::steady_timer::time_point::max());
  on_finished([timer, ex] { net::post(ex, [timer] { timer->cancel(); }); });
  while (!run_->finished) {
    auto [ec] = co_await timer->async_wait(net::as_tuple(net::use_awaitable));
    (void)ec;  // cancelled by on_finished, or by the awaiting coroutine's own cancellation
    if (!run_->finished) {
      if (auto cs = co_await net::this_coro::cancellation_state; cs.cancelled() != net::cancellation_type::none)
        throw boost::system::system_error(net::error::operation_aborted);
    }
  }
}

void engine::stop() {
  run_->stop_requested = true;
  for (auto& s : run_->shards) s->request_stop(false);
}

void engine::stop_now() {
  run_->stop_requested = true;
  for (auto& s : run_->shards) s->request_stop(true);
}

void engine::wake() {
  if (!run_->started_flag.load(std::memory_order_acquire)) return;  // shards claim at start anyway
  for (auto& s : run_->shards) s->wake();
}

void engine::wait() {
  for (auto& t : run_->threads)
    if (t.joinable()) t.join();
  run_->threads.clear();
}

void engine::on_finished(std::function<void()> fn) {
  std::unique_lock lock(run_->mutex);
  if (run_->finished) {
    lock.unlock();
    fn();
    return;
  }
  run_->on_finished.push_back(std::move(fn));
}

void engine::shard_ended(bool drained) {
  if (!drained) run_->undrained.fetch_add(1);
  if (--run_->running != 0) return;
  run_->ended = (std::chrono::steady_clock::now() - run_->started).count();
  std::vector<std::function<void()>> fns;
  {
    std::lock_guard lock(run_->mutex);
    run_->finished = true;
    fns = std::move(run_->on_finished);
  }
  for (auto& fn : fns) fn();
  // On the caller's io_context this is inside the shard's completion: the handler runs after it.
  if (auto done = std::move(run_->completion)) done->complete(summary(), run_->on_caller);
}

end_reason engine::ending() const {
  if (!run_->finished) return end_reason::running;
  if (denied()) return end_reason::denied;
  if (run_->undrained.load() == 0) return end_reason::drained;
  if (run_->stop_requested) return end_reason::stopped;
  return end_reason::failed;
}

run_summary engine::summary() const {
  run_summary s;
  s.completed = load(counters_.completed);
  s.failed = load(counters_.failed);
  s.no_data = load(counters_.no_data);
  s.lost_leases = load(counters_.lost_leases);
  s.released = load(counters_.released);
  s.retries = load(counters_.retries);
  s.renewals = load(counters_.renewals);
  s.answer_calls = load(counters_.answer_calls);
  s.answers_reused = load(counters_.answers_reused);
  s.answers_joined = load(counters_.answers_joined);
  s.answers_from_store = load(counters_.answers_from_store);
  // An ended run's length was fixed when it ended (shard_ended, perhaps before start() returned);
  // a running one reads `started` only once start() has published it (started_flag): the
  // dashboard and the progress line may ask from another thread at any time.
  const auto elapsed = run_->finished ? std::chrono::steady_clock::duration(run_->ended.load())
                       : run_->started_flag.load(std::memory_order_acquire) ? std::chrono::steady_clock::now() - run_->started
                                                                              : std::chrono::steady_clock::duration{};
  s.elapsed_s = std::chrono::duration<double>(elapsed).count();
  s.ended = ending();
  if (s.ended == end_reason::denied) s.denied = denied().value_or("");
  return s;
}

}  // namespace dibs
