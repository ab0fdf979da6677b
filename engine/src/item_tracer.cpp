#include "item_tracer.hpp"

#include <cmath>
#include <cstring>

namespace dibs {

namespace {
// splitmix64's finalizer: a good 64-bit mix, enough to spread a key's hash over the id.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h) {
  for (const unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

void put_be(std::uint64_t v, std::uint8_t* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<std::uint8_t>(v & 0xff);
    v >>= 8;
  }
}

// One number per process, so that this process's claims of one item share a trace and another
// process's (or another run's) claims of it do not.
std::uint64_t process_trace_seed() {
  static const std::uint64_t seed = [] {
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) ^ rd();
  }();
  return seed;
}
}  // namespace

trace_id item_trace_id(std::uint64_t seed, std::string_view key) {
  const auto h = fnv1a(key, 0xcbf29ce484222325ULL ^ seed);
  trace_id id{};
  put_be(mix(h ^ seed), id.data());
  put_be(mix(h + 0x9e3779b97f4a7c15ULL) | 1, id.data() + 8);  // never all zero
  return id;
}

bool sampled_by_ratio(const trace_id& id, double ratio) {
  if (ratio >= 1.0) return true;
  if (!(ratio > 0.0)) return false;
  std::uint64_t low = 0;
  for (int i = 9; i < 16; ++i) low = (low << 8) | id[i];  // 56 bits
  const auto bound = static_cast<std::uint64_t>(std::ldexp(ratio, 56));
  return low < bound;
}

item_tracer::item_tracer(span_exporter& out, double ratio, std::string worker)
    : out_(out), ratio_(ratio), worker_(std::move(worker)), rng_(std::random_device{}()) {}

span_id item_tracer::new_span_id() {
  span_id id{};
  std::uint64_t v = 0;
  while (v == 0) v = rng_();
  put_be(v, id.data());
  return id;
}

std::unique_ptr<item_trace> item_tracer::begin(const std::string& key, int attempt) {
  auto t = std::make_unique<item_trace>();
  t->ctx.trace = item_trace_id(process_trace_seed(), key);
  t->ctx.span = new_span_id();
  t->ctx.sampled = sampled_by_ratio(t->ctx.trace, ratio_);
  t->ctx.recording = out_.accepting();
  t->start = std::chrono::system_clock::now();
  t->key = key;
  t->attempt = attempt;
  return t;
}

void item_tracer::settled(item_trace& t, std::string outcome, std::string reason, int http_status, bool failed,
                          std::vector<span_record> calls) {
  t.outcome = std::move(outcome);
  t.reason = std::move(reason);
  t.http_status = http_status;
  t.failed = failed;
  for (auto& c : calls) t.calls.push_back(std::move(c));
}

void item_tracer::finish(item_trace& t, const traced_write* write) {
  if (t.outcome.empty()) t.outcome = "not_written";
  if (t.outcome == "lease_lost") t.failed = true;
  if (!t.ctx.sampled && !t.failed) return;
  if (!t.ctx.recording || !out_.accepting()) {  // the exporter would drop them: count them, make nothing
    out_.dropped_now(t.calls.size() + (write ? 2 : 1));
    t.calls.clear();
    return;
  }
  const auto now = std::chrono::system_clock::now();
  span_record item;
  item.trace = t.ctx.trace;
  item.span = t.ctx.span;
  item.name = "dibs.item";
  item.kind = span_kind::consumer;
  item.start = t.start;
  item.end = now;
  item.set("dibs.item.key", t.key);
  item.set("dibs.item.attempt", t.attempt);
  item.set("dibs.outcome", t.outcome);
  item.set("dibs.worker", worker_);
  if (!t.reason.empty()) item.set("dibs.reason", t.reason);
  if (t.http_status) item.set("http.response.status_code", t.http_status);
  if (t.failed) {
    item.status = span_status::error;
    item.status_message = t.reason.empty() ? t.outcome : t.reason;
  }
  for (auto& c : t.calls) ready_.push_back(std::move(c));
  t.calls.clear();
  if (write) {
    span_record w;
    w.trace = t.ctx.trace;
    w.span = new_span_id();
    w.parent = t.ctx.span;
    w.name = "dibs.store." + write->operation;
    w.kind = span_kind::client;
    w.start = std::min(write->start, now);
    w.end = now;
    w.set("db.operation.name", write->operation);
    w.set("dibs.store", write->store);
    ready_.push_back(std::move(w));
  }
  ready_.push_back(std::move(item));
}

void item_tracer::flush() {
  if (ready_.empty()) return;
  std::vector<span_record> out;
  out.swap(ready_);
  out_.export_spans(std::move(out));
}

}  // namespace dibs
