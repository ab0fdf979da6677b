// `dibs enrich` against an LLM provider's API that meters tokens per minute as OpenAI and
// Anthropic do (tests/servers/llm_api.py, Python's http.server): a request is admitted when the
// token bucket holds what it will be charged and settled by its answer's usage, with default
// flags (the limit read from the provider's headers) or --token-rate alone (a server that states
// nothing). Behaviour only: every item done, the API's refusals few, no call for a request that
// could never be admitted.
#include "http_servers/llm_api.hpp"

#include "support/run_dibs.hpp"
#include "support/scratch_files.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace dibs::test;

namespace {
// `n` product reviews of 60-110 words each (about 100-180 tokens), one JSON object a line.
std::filesystem::path write_reviews(const std::filesystem::path& dir, int n) {
  static const char* words[] = {"good", "bad", "battery", "screen", "price", "delivery", "broke", "works", "sturdy", "slow"};
  const auto path = dir / "reviews.jsonl";
  std::ofstream out(path);
  for (int i = 0; i < n; ++i) {
    std::string text;
    for (int w = 0; w < 60 + (i * 7) % 50; ++w) text += std::string(w ? " " : "") + words[(i * 31 + w * 17) % 10];
    out << "{\"id\": " << i << ", \"title\": \"Review " << i << "\", \"text\": \"" << text << "\"}\n";
  }
  return path;
}

struct llm_run {
  int rc;
  std::string out;
};

// One `dibs enrich` of `n` reviews against `api` (`style` openai or anthropic), `max_tokens` a
// request, `extra` flags after the request shape.
llm_run enrich(const llm_api& api, const std::string& style, int n, int max_tokens, std::vector<std::string> extra = {}) {
  const auto dir = scratch_dir("dibs-llm", style + std::to_string(n));
  const auto in = write_reviews(dir, n);
  const bool openai = style == "openai";
  const std::string body = std::string(R"({"model": ")") + (openai ? "gpt-4o-mini" : "claude-haiku") +
                           R"(", "max_tokens": )" + std::to_string(max_tokens) +
                           R"(, "messages": [{"role": "user", "content": "Label this review: {title}\n{text}"}]})";
  std::vector<std::string> argv = {"enrich", "--store", "jsonl:" + in.string(), "--out", (dir / "out.jsonl").string(),
                                   "--url", api.base_url() + (openai ? "/v1/chat/completions" : "/v1/messages"),
                                   "--method", "POST", "--body", body, "--no-status-check", "--no-progress",
                                   "--map", openai ? "label=/choices/0/message/content,tokens=/usage/total_tokens"
                                                   : "label=/content/0/text,tokens=/usage/output_tokens"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto [rc, out] = run_dibs_within(std::chrono::seconds(180), argv);
  return {rc, out};
}
}  // namespace

TEST_CASE("an LLM API metering tokens per minute: with default flags each request waits until the bucket holds it, "
          "read from the provider's headers",
          "[llm]") {
  // 240 reviews of about 135 tokens each, a 400-token max_tokens: more than a minute's 30,000
  // tokens, so the bucket empties and the run goes on as it refills (about 10 s). Without the
  // meter, a run at the adaptive limit was refused on most calls once the bucket was empty.
  const std::string style = GENERATE("openai", "anthropic");
  INFO(style);
  llm_api api({"--style", style, "--tpm", "30000", "--latency-ms", "20", "--latency-per-token-ms", "0"});
  const auto run = enrich(api, style, 240, 400);
  INFO(run.out);
  CHECK(run.rc == 0);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=240 failed=0"));
  CHECK(api.stat("ok") == 240);
  CHECK(api.stat("tokens_settled") > 30000);  // the bucket did empty: the refill was waited for
  CHECK(api.stat("refused_429") <= 2);         // 1% of calls at most
}

TEST_CASE("a token rate given alone (--token-rate) paces an LLM API that states no limit and only refuses", "[llm]") {
  llm_api api({"--tpm", "30000", "--latency-ms", "20", "--latency-per-token-ms", "0", "--no-headers"});
  const auto run = enrich(api, "openai", 240, 400, {"--token-rate", "30000/min"});
  INFO(run.out);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=240 failed=0"));
  CHECK(api.stat("tokens_settled") > 30000);
  CHECK(api.stat("refused_429") <= 2);
}

TEST_CASE("an API that states no limit but says when in its 429's words: no row spends an attempt on its pace, and one "
          "larger than its limit fails after one call",
          "[llm]") {
  // No header, no --token-rate: the refusals are the pace's only word ("Please try again in
  // 1.2s."), and a request over the whole limit is refused as "Request too large" each time.
  llm_api api({"--tpm", "20000", "--latency-ms", "20", "--latency-per-token-ms", "0", "--no-headers"});
  const auto run = enrich(api, "openai", 120, 400, {"--max-attempts", "1"});
  INFO(run.out.substr(0, 3000));
  CHECK_THAT(run.out, Catch::Contains("summary: completed=120 failed=0"));
  CHECK(api.stat("refused_429") > 0);  // the bucket ran out: the words were read, not the headers
  llm_api small({"--tpm", "3000", "--latency-ms", "5", "--no-headers"});
  const auto big = enrich(small, "openai", 3, 5000, {"--no-preflight"});
  INFO(big.out.substr(0, 3000));
  CHECK_THAT(big.out, Catch::Contains("summary: completed=0 failed=3"));
  CHECK_THAT(big.out, Catch::Contains("Request too large"));
  CHECK(small.stat("requests") == 3);  // one call a row, never again
}

TEST_CASE("a request larger than the API's whole token limit fails its item with no call", "[llm]") {
  llm_api api({"--tpm", "100000", "--latency-ms", "5"});
  const auto run = enrich(api, "openai", 5, 5000, {"--token-rate", "3000/min", "--no-preflight"});
  INFO(run.out);
  CHECK(run.rc == 1);
  CHECK_THAT(run.out, Catch::Contains("summary: completed=0 failed=5"));
  CHECK_THAT(run.out, Catch::Contains("more than the API's whole limit of 3000 tokens a minute"));
  CHECK(api.stat("requests") == 0);
}

TEST_CASE("an LLM's answer classes: a prompt too long, an answer cut at max_tokens and a refusal each fail their row "
          "after one call with their reason, nothing written, and --expect-json and --map read inside the content",
          "[llm]") {
  llm_api api({"--tpm", "100000", "--latency-ms", "5"});
  const auto dir = scratch_dir("dibs-llm", "classes");
  {
    std::ofstream out(dir / "in.jsonl");
    for (int i = 0; i < 20; ++i) {
      const std::string text = i == 3 ? "TOO-LONG" : i == 7 ? "TRUNCATE this" : i == 11 ? "REFUSE this" : "fine " + std::to_string(i);
      out << "{\"id\": " << i << ", \"title\": \"t" << i << "\", \"text\": \"" << text << "\"}\n";
    }
  }
  const auto run = run_dibs_within(
      std::chrono::seconds(120),
      {"enrich", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--out", (dir / "out.jsonl").string(), "--url",
       api.base_url() + "/v1/chat/completions", "--method", "POST", "--body",
       R"({"model": "gpt-4o-mini", "max_tokens": 40, "messages": [{"role": "user", "content": "{title}: {text}"}]})",
       "--no-status-check", "--no-progress", "--no-preflight", "--expect-json", "/choices/0/message/content", "--map",
       "label=/choices/0/message/content/label,tokens=/usage/total_tokens"});
  INFO(run.second);
  CHECK(run.first == 1);
  CHECK_THAT(run.second, Catch::Contains("summary: completed=17 failed=3"));
  CHECK(api.stat("requests") == 20);  // one call each: none of the three is asked again
  const auto written = slurp(dir / "out.jsonl");
  INFO(written);
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = written.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  CHECK(count("\"location\":{\"label\":\"") == 17);  // the mapped object, the label read inside the content
  CHECK(count("\"_dibs\":{\"failed\"") == 3);         // the three written as failed, no answer kept
  const auto failed = run_dibs({"failed", "--store", "jsonl:" + (dir / "in.jsonl").string(), "--run-out", (dir / "out.jsonl").string()});
  INFO(failed.second);
  CHECK_THAT(failed.second, Catch::Contains("context_length_exceeded") || Catch::Contains("maximum context length"));
  CHECK_THAT(failed.second, Catch::Contains("cut at max_tokens (finish_reason: length)"));
  CHECK_THAT(failed.second, Catch::Contains("the model refused: I can't help with that."));
}
