#include "bench_drain.hpp"

#include "bench_scratch.hpp"
#include "timed_store.hpp"

#include <dibs/ipapi/ipapi_stub.hpp>
#include <dibs/http/http_processor.hpp>

#include <dibs/engine.hpp>

#include <optional>

namespace dibs::cli {

namespace {
// "No HTTP": the store's side alone, every item done at once with an empty answer.
class noop_processor final : public processor {
 public:
  awaitable<outcome> process(job) override { co_return outcome::done("{}"); }
};
}  // namespace

worker_report drain_here(const std::shared_ptr<admin_store>& st, const drain_settings& s, signal_watch& signals,
                         const std::function<void(int)>& also) {
  std::optional<stub::ipapi_stub> api;
  processor_factory processors = [](const shard_info&) -> std::unique_ptr<processor> {
    return std::make_unique<noop_processor>();
  };
  if (s.latency) {
    api.emplace(stub::stub_options::loopback(*s.latency));
    api->start();
    http::processor_options p;
    p.url = http::url_template::parse(api->base_url() + "/json/{originatingIp}");
    processors = http::make_http_processor_factory(p);
  }
  engine_config cfg;
  cfg.shards = s.shards;
  cfg.concurrency = s.concurrency;
  cfg.claim_batch = s.claim_batch;
  cfg.validate();

  const auto statements_before = statements_sent(*st);
  const auto conflicts_before = st->claim_conflicts();
  auto timed = std::make_shared<timed_store>(st);
  engine e(cfg, timed, std::move(processors));
  e.start();
  // After start: a signal that came before is acted on at once.
  signals.on_signal([&e, &also](int sig) {
    e.stop_now();
    if (also) also(sig);
  });
  e.wait();
  signals.on_signal({});
  if (api) api->stop();

  const auto sum = e.summary();
  worker_report r;
  r.docs = sum.completed;
  r.failed = sum.failed;
  const auto statements_after = statements_sent(*st);
  r.counts_statements = statements_before && statements_after;
  if (r.counts_statements) r.statements = *statements_after - *statements_before;
  r.conflicts = st->claim_conflicts() - conflicts_before;
  r.claim = timed->claims().text();
  r.write = timed->writes().text();
  return r;
}

}  // namespace dibs::cli
