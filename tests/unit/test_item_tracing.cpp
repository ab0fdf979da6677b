// An item's trace without a run (engine/src/item_tracer.hpp): ids, head sampling, what is kept.
#include "engine/src/item_tracer.hpp"

#include <catch2/catch.hpp>

#include <set>

namespace {
struct kept_spans : dibs::span_exporter {
  std::vector<dibs::span_record> spans;
  void export_spans(std::vector<dibs::span_record> s) override {
    for (auto& x : s) spans.push_back(std::move(x));
  }
};

const std::string* text_of(const dibs::span_record& s, const std::string& key) {
  for (const auto& a : s.attributes)
    if (a.key == key) return std::get_if<std::string>(&a.value);
  return nullptr;
}

dibs::span_record call_of(const dibs::trace_context& ctx) {
  dibs::span_record c;
  c.trace = ctx.trace;
  c.span = {1, 2, 3, 4, 5, 6, 7, 8};
  c.parent = ctx.span;
  c.name = "GET";
  return c;
}
}  // namespace

TEST_CASE("item tracing: one item's claims share a trace, other items and processes get others", "[tracing]") {
  const auto a = dibs::item_trace_id(1, "item-1");
  CHECK(a == dibs::item_trace_id(1, "item-1"));
  CHECK(a != dibs::item_trace_id(1, "item-2"));
  CHECK(a != dibs::item_trace_id(2, "item-1"));
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(dibs::hex_of(dibs::item_trace_id(7, std::to_string(i))));
  CHECK(seen.size() == 1000);
  CHECK(dibs::hex_of(a).size() == 32);
}

TEST_CASE("item tracing: the ratio sampler keeps about its share, all or none at the ends", "[tracing]") {
  int kept = 0;
  for (int i = 0; i < 10'000; ++i) {
    const auto id = dibs::item_trace_id(3, std::to_string(i));
    CHECK(dibs::sampled_by_ratio(id, 1.0));
    CHECK_FALSE(dibs::sampled_by_ratio(id, 0.0));
    kept += dibs::sampled_by_ratio(id, 0.25) ? 1 : 0;
  }
  CHECK(kept > 2'200);
  CHECK(kept < 2'800);
}

TEST_CASE("item tracing: a sampled item exports its span, its calls and its write, linked", "[tracing]") {
  kept_spans out;
  dibs::item_tracer tracer(out, 1.0, "w-0");
  auto t = tracer.begin("42", 2);
  REQUIRE(t->ctx.valid());
  CHECK(t->ctx.sampled);
  dibs::item_tracer::settled(*t, "done", "", 0, false, {call_of(t->ctx)});
  dibs::traced_write w{"complete", std::chrono::system_clock::now(), "memory"};
  tracer.finish(*t, &w);
  CHECK(out.spans.empty());  // handed over at the flush, not per item
  tracer.flush();
  REQUIRE(out.spans.size() == 3);
  const auto& item = out.spans.back();
  CHECK(item.name == "dibs.item");
  CHECK(item.parent == dibs::span_id{});
  CHECK(*text_of(item, "dibs.item.key") == "42");
  CHECK(*text_of(item, "dibs.outcome") == "done");
  for (std::size_t i = 0; i + 1 < out.spans.size(); ++i) {
    CHECK(out.spans[i].trace == item.trace);
    CHECK(out.spans[i].parent == item.span);
  }
  CHECK(out.spans[1].name == "dibs.store.complete");
}

TEST_CASE("item tracing: a trace not sampled is dropped, unless its item failed", "[tracing]") {
  kept_spans out;
  dibs::item_tracer tracer(out, 0.0, "w-0");
  auto done = tracer.begin("1", 1);
  CHECK_FALSE(done->ctx.sampled);
  dibs::item_tracer::settled(*done, "done", "", 0, false, {call_of(done->ctx)});
  tracer.finish(*done, nullptr);
  auto failed = tracer.begin("2", 1);
  dibs::item_tracer::settled(*failed, "failed", "HTTP 404", 404, true, {call_of(failed->ctx)});
  tracer.finish(*failed, nullptr);
  tracer.flush();
  REQUIRE(out.spans.size() == 2);
  CHECK(out.spans.back().status == dibs::span_status::error);
  CHECK(*text_of(out.spans.back(), "dibs.reason") == "HTTP 404");
  CHECK(out.spans.front().trace == failed->ctx.trace);
}

TEST_CASE("item tracing: traceparent names the trace, the call's span and the sampling", "[tracing]") {
  dibs::trace_context ctx;
  ctx.trace = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  ctx.sampled = true;
  const dibs::span_id call{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
  CHECK(dibs::traceparent_header(ctx, call) == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ctx.sampled = false;
  CHECK(dibs::traceparent_header(ctx, call) == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
}
