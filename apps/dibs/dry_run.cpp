#include "dry_run.hpp"

#include "adapters/http/processor/request_builder.hpp"

#include <dibs/net.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <dibs/counters.hpp>
#include <dibs/http/http_figures.hpp>

#include <simdjson.h>

#include <optional>

namespace dibs::cli {

namespace {
job job_of(const pending_sample& s, const std::string& source) {
  job j;
  j.id = s.id;
  j.attempts = 1;
  j.fields.push_back(s.source);
  j.fields.back().name = source;
  j.fields.insert(j.fields.end(), s.more.begin(), s.more.end());
  return j;
}

// The columns --map would set on a SQL table, each from the member of its name of the answer
// written (null when it has none).
std::string mapped_columns_of(const std::string& result, const std::vector<std::string>& mapped) {
  if (mapped.empty()) return {};
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(result).get(doc)) return {};
  std::string out = "; and the columns";
  for (const auto& name : mapped) {
    simdjson::dom::element v;
    out += " " + name + " = " + (doc[name].get(v) ? std::string("null") : simdjson::minify(v));
    if (&name != &mapped.back()) out += ",";
  }
  return out;
}

std::string write_of(const outcome& o, const std::string& target, const std::vector<std::string>& mapped) {
  switch (o.k) {
    case outcome::kind::done:
      return "would write " + target + " = " + o.result + mapped_columns_of(o.result, mapped) +
             (o.no_data ? " (no data: " + o.why + ")" : std::string());
    case outcome::kind::fail:
      return "would fail the item: " + o.why;
    case outcome::kind::retry:
      return "would retry it later (nothing written): " + o.why;
  }
  return {};
}
}  // namespace

std::string token_estimate_line(std::uint64_t in, std::uint64_t out, std::size_t calls, std::optional<std::uint64_t> pending,
                                double price_in, double price_out) {
  char buf[512];
  const double per_in = static_cast<double>(in) / static_cast<double>(calls);
  const double per_out = static_cast<double>(out) / static_cast<double>(calls);
  std::string line = "dry run: the sample's answers used " + std::to_string(in + out) + " tokens (" + std::to_string(in) +
                     " input, " + std::to_string(out) + " output)";
  const bool priced = price_in > 0 || price_out > 0;
  if (priced) {
    line += ", costing " + http::http_figures::cost_text(static_cast<double>(in) * price_in + static_cast<double>(out) * price_out) +
            " at --price";
  }
  if (pending) {
    const double n = static_cast<double>(*pending);
    std::snprintf(buf, sizeof buf, "; the %llu pending items would use about %.0f tokens (%.0f input, %.0f output)",
                  static_cast<unsigned long long>(*pending), n * (per_in + per_out), n * per_in, n * per_out);
    line += buf;
    if (priced) {
      line += ", costing about " + http::http_figures::cost_text(n * (per_in * price_in + per_out * price_out));
    }
  }
  return line;
}

namespace {
// The sample's figures: the tokens its `items` took, and the run's estimated from them.
void print_estimate(admin_store& st, const counters& figures, std::size_t calls, std::FILE* out) {
  if (const auto* h = figures.extras.find<http::http_figures>(); h && h->metered() && calls > 0) {
    std::optional<std::uint64_t> pending;
    try {
      pending = st.stats_blocking().pending;
    } catch (const std::exception&) {  // the counts can't be read: the sample's figures alone
    }
    std::fprintf(out, "%s\n", token_estimate_line(h->tokens_in.load(), h->tokens_out.load(), calls, pending, h->price_in.load(),
                                                  h->price_out.load()).c_str());
  }
}

// A request as the dry run prints it: indented under its item.
std::string indented(std::string request) {
  for (std::size_t at = 0; (at = request.find('\n', at)) != std::string::npos && at + 1 < request.size(); at += 3)
    request.replace(at, 1, "\n  ");
  return request;
}
}  // namespace

std::size_t run_dry(admin_store& st, http::processor_options call, const dry_run_fields& fields, std::size_t n,
                    std::FILE* out) {
  call.budgets.clear();  // a dry run's calls are no run's
  call.reuse.reset();    // each item its own call, as asked
  const auto samples = st.sample_pending_items(n);
  net::io_context ioc(1);
  auto opts = std::make_shared<const http::processor_options>(std::move(call));
  counters figures;  // the sample's tokens, for the whole run's estimate
  http::http_processor p(ioc.get_executor(), opts, &figures);
  std::size_t calls = 0;
  for (const auto& s : samples) {
    const auto j = job_of(s, fields.source);
    std::fprintf(out, "dry run: item %s\n", s.id.c_str());
    const auto shown = http::build_request(opts->url, opts->shape, j, true);
    if (!shown.error.empty()) {
      std::fprintf(out, "  no request: %s\n  would fail the item: %s\n", shown.error.c_str(), shown.error.c_str());
      continue;
    }
    std::fprintf(out, "  %s", indented(http::describe_request(opts->url, shown.req)).c_str());
    auto fut = net::co_spawn(ioc, p.process(j), net::use_future);
    ioc.restart();
    ioc.run();
    const auto o = fut.get();
    ++calls;
    std::fprintf(out, "  %s\n", write_of(o, fields.target, fields.mapped).c_str());
  }
  std::fprintf(out, "dry run: %zu item%s, %zu call%s to the API; nothing was claimed or written\n", samples.size(),
               samples.size() == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
  print_estimate(st, figures, calls, out);
  std::fflush(out);
  return calls;
}

std::size_t run_dry_batch(admin_store& st, http::batch_processor_options batch, const http::batch_body& shown,
                          const dry_run_fields& fields, std::size_t n, std::FILE* out) {
  batch.call.budgets.clear();  // a dry run's calls are no run's
  batch.call.prefetched.reset();
  const auto samples = st.sample_pending_items(std::min(n, batch.batch_size));
  std::vector<job> jobs;
  std::vector<std::string> elements;
  for (const auto& s : samples) {
    jobs.push_back(job_of(s, fields.source));
    if (auto e = shown.element(jobs.back(), batch.call.url.max_value_bytes()); e.error.empty()) elements.push_back(std::move(e.text));
  }
  std::fprintf(out, "dry run: %zu item%s in one batch request%s\n", samples.size(), samples.size() == 1 ? "" : "s",
               n > batch.batch_size ? " (at most --batch-size)" : "");
  if (!elements.empty()) {
    auto req = http::build_request(batch.call.url, batch.call.shape, job{}, true).req;  // a fixed URL, fixed headers
    req.method = http::request::verb::post;
    req.content_type = "application/json";
    req.body = shown.join(elements);
    std::fprintf(out, "  %s", indented(http::describe_request(batch.call.url, req)).c_str());
  }
  // Every item's pipeline joins the one open batch, as a shard's do; the leader sends it.
  net::io_context ioc(1);
  counters figures;  // the sample's calls and tokens
  shard_info shard;
  shard.executor = ioc.get_executor();
  shard.figures = &figures;
  shard.ceiling = shard.whole_ceiling = std::max<std::size_t>(jobs.size(), 1);
  batch.linger = std::chrono::milliseconds(0);  // every item joins before the leader runs: no wait
  auto p = http::make_batch_processor_factory(std::move(batch))(shard);
  std::vector<std::future<outcome>> answers;
  for (const auto& j : jobs) answers.push_back(net::co_spawn(ioc, p->process(j), net::use_future));
  ioc.run();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::fprintf(out, "dry run: item %s\n", jobs[i].id.c_str());
    std::fprintf(out, "  %s\n", write_of(answers[i].get(), fields.target, fields.mapped).c_str());
  }
  std::size_t calls = 0;
  if (const auto* h = figures.extras.find<http::http_figures>())
    for (const auto& r : h->responses) calls += r.load();
  std::fprintf(out, "dry run: %zu item%s, %zu call%s to the API; nothing was claimed or written\n", jobs.size(),
               jobs.size() == 1 ? "" : "s", calls, calls == 1 ? "" : "s");
  print_estimate(st, figures, calls > 0 ? jobs.size() : 0, out);  // the run's tokens by the rows, not the calls
  std::fflush(out);
  return calls;
}

}  // namespace dibs::cli
