// The tokens an LLM API meters, held as its server holds them (token_meter.hpp), what a request
// will be charged and what its answer used (request_tokens.hpp), and what an answer means for the
// bucket (token_charge.hpp): in virtual time, without a network.
#include "adapters/http/processor/token_charge.hpp"
#include "adapters/http/rate/request_tokens.hpp"
#include "adapters/http/rate/token_meter.hpp"

#include <dibs/http/exchange_policy.hpp>

#include <catch2/catch.hpp>

#include <initializer_list>
#include <vector>

using namespace dibs::http;
using namespace std::chrono_literals;
using clk = token_meter::clock;

namespace {
// Admits one request of each of `tokens` at `at`, every one of them admitted at once.
std::vector<token_meter::admitted> admit(token_meter& m, clk::time_point at, std::initializer_list<std::int64_t> tokens) {
  std::vector<token_meter::admitted> out;
  for (const auto n : tokens) {
    auto t = m.try_take(n, at).ticket;
    REQUIRE(t);
    out.push_back(*t);
  }
  return out;
}
}  // namespace

TEST_CASE("the most output tokens a request asks for, in each provider's words", "[tokens]") {
  CHECK(max_output_tokens(R"({"model":"m","max_tokens":50,"messages":[]})") == 50);
  CHECK(max_output_tokens(R"({"max_completion_tokens":80,"max_tokens":50})") == 80);  // OpenAI's newer name first
  CHECK(max_output_tokens(R"({"max_output_tokens":64})") == 64);                       // the Responses API
  CHECK(max_output_tokens(R"({"generationConfig":{"maxOutputTokens":32}})") == 32);     // Gemini
  CHECK_FALSE(max_output_tokens(R"({"model":"m","messages":[]})"));
  CHECK_FALSE(max_output_tokens(R"({"max_tokens":"50"})"));
  CHECK_FALSE(max_output_tokens(R"({"max_tokens":-1})"));
  CHECK_FALSE(max_output_tokens("not json"));
  CHECK_FALSE(max_output_tokens(""));
}

TEST_CASE("what an answer says it used, in each provider's words", "[tokens]") {
  const auto openai = answer_usage(R"({"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}})");
  CHECK(openai.input == 9);
  CHECK(openai.output == 20);
  CHECK(openai.total() == 29);
  const auto embeddings = answer_usage(R"({"data":[],"usage":{"prompt_tokens":8,"total_tokens":8}})");
  CHECK(embeddings.total() == 8);
  // Anthropic: a cache write counts against its input limit, a cache read does not.
  const auto anthropic = answer_usage(
      R"({"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":500,"output_tokens":7}})");
  CHECK(anthropic.total() == 127);
  const auto gemini = answer_usage(R"({"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":4,"totalTokenCount":15}})");
  CHECK(gemini.total() == 15);
  CHECK_FALSE(answer_usage(R"({"choices":[]})").known());
  CHECK_FALSE(answer_usage(R"({"usage":{}})").known());
  CHECK_FALSE(answer_usage("[1,2]").known());
}

TEST_CASE("the estimate starts at 4 bytes a token and follows the densest answers at once", "[tokens]") {
  token_estimator e;
  CHECK(e.estimate(400, 50) == 150);
  CHECK(e.estimate(400, std::nullopt) == 100 + 256);  // no max_tokens: the output answers used, 256 before any
  e.learn(500, token_usage{100, 30});  // 5 bytes a token
  CHECK(e.bytes_per_token() == Approx(5.0));
  CHECK(e.estimate(500, std::nullopt) == 100 + 30);
  e.learn(400, token_usage{100, 30});  // denser: taken at once (an estimate short is a 429)
  CHECK(e.bytes_per_token() == Approx(4.0));
  e.learn(800, token_usage{100, 30});  // sparser: a hundredth of the way
  CHECK(e.bytes_per_token() == Approx(4.04));
}

TEST_CASE("a bucket of a minute's tokens: full at first, then admitted as it refills", "[tokens]") {
  token_meter m(60'000);  // 1,000 a second, a margin of 600
  const auto t0 = clk::now();
  // A full bucket admits 59,400 tokens (the margin kept) at once.
  for (int i = 0; i < 594; ++i) REQUIRE(m.try_take(100, t0).ticket);
  auto t = m.try_take(100, t0);
  REQUIRE_FALSE(t.ticket);
  CHECK(t.retry_at > t0);
  CHECK(t.retry_at - t0 <= 101ms);  // 100 tokens refill in 100 ms
  CHECK(m.try_take(100, t.retry_at).ticket);
  // A whole bucket: admitted when full, and never more than a bucket.
  token_meter big(1'000);
  CHECK(big.try_take(990, t0).ticket);
  CHECK_FALSE(big.try_take(1, t0).ticket);
}

TEST_CASE("an answer settles its request: what it did not use goes back, once", "[tokens]") {
  token_meter m(60'000);
  const auto t0 = clk::now();
  auto a = m.try_take(30'000, t0).ticket;
  auto b = m.try_take(29'000, t0).ticket;
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(m.try_take(1'000, t0).ticket);
  m.settle(*a, 10'000, t0);  // reserved 30,000, used 10,000
  CHECK(m.level(t0) == 21'000);
  CHECK(m.used_total() == 10'000);
  m.give_back(*b, t0);  // refused: never charged
  CHECK(m.level(t0) == 50'000);
  CHECK(m.try_take(1'000, t0).ticket);
}

TEST_CASE("the headers pull the bucket to the server's count, the requests it has not seen added", "[tokens]") {
  token_meter m(60'000);
  const auto t0 = clk::now();
  auto answered = m.try_take(1'000, t0).ticket;
  auto later = m.try_take(5'000, t0 + 1ms).ticket;  // written after: the server may not have seen it
  REQUIRE(answered);
  REQUIRE(later);
  m.written(*answered, t0);
  m.written(*later, t0 + 1ms);
  // Other processes spent most of the bucket: the server has 20,000 left.
  m.settle(*answered, 800, t0 + 2ms);
  m.read(20'000, 60'000, t0, t0 + 2ms);
  CHECK(m.level(t0 + 2ms) == 15'000);
  // A reading older than one taken already changes nothing.
  m.read(60'000, 60'000, t0 - 1s, t0 + 2ms);
  CHECK(m.level(t0 + 2ms) == 15'000);
  // `later` was added to the reading at what it reserved: what it did not use goes back.
  auto newer = m.try_take(1'000, t0 + 3ms).ticket;
  REQUIRE(newer);
  m.written(*newer, t0 + 3ms);
  m.settle(*later, 1'000, t0 + 3ms);
  CHECK(m.level(t0 + 3ms) == 15'001 - 1'000 + 4'000);
  // One written before the request a reading answered is in the server's count, settled or
  // not: its surplus is not given back a second time.
  auto before = m.try_take(2'000, t0 + 4ms).ticket;
  auto answered2 = m.try_take(100, t0 + 5ms).ticket;
  REQUIRE(before);
  REQUIRE(answered2);
  m.written(*before, t0 + 4ms);
  m.written(*answered2, t0 + 5ms);
  m.read(30'000, 60'000, t0 + 5ms, t0 + 6ms);
  const auto level = m.level(t0 + 6ms);
  CHECK(level == 30'000 - 0);  // nothing written after answered2, nothing unseen
  m.settle(*before, 500, t0 + 6ms);
  CHECK(m.level(t0 + 6ms) == level);
}

TEST_CASE("a request admitted long ago but not yet written is one the server has not seen", "[tokens]") {
  // Admitted, then held for a rate slot or a connection while later ones went out and were
  // answered: a reading of those holds nothing of it (taken for seen, four processes bursting
  // on an API that accepts every connection at once had 1-3% of their calls refused).
  token_meter m(60'000);
  const auto t0 = clk::now();
  auto waiting = m.try_take(4'000, t0).ticket;
  auto answered = m.try_take(1'000, t0 + 1ms).ticket;
  REQUIRE(waiting);
  REQUIRE(answered);
  m.written(*answered, t0 + 1ms);
  m.settle(*answered, 1'000, t0 + 2ms);
  m.read(20'000, 60'000, t0 + 1ms, t0 + 2ms);
  CHECK(m.level(t0 + 2ms) == 16'000);  // the server's 20,000 less the 4,000 it has not seen
  // Written after the answered one: still unseen by that reading.
  m.written(*waiting, t0 + 3ms);
  auto answered2 = m.try_take(1'000, t0 + 3ms).ticket;
  REQUIRE(answered2);
  m.written(*answered2, t0 + 2ms);  // an older write, read later: both held unseen by it
  m.settle(*answered2, 1'000, t0 + 4ms);
  m.read(20'000, 60'000, t0 + 2ms, t0 + 4ms);
  CHECK(m.level(t0 + 4ms) == 16'000);  // the server's 20,000 at 4 ms, less `waiting` again
}

TEST_CASE("a request written on a new connection is unseen until the server is known to have accepted that far", "[tokens]") {
  // A busy server with a long listen queue accepts connections late, in the order they came: a
  // request written on a new one may still be unread when later ones on kept-alive connections
  // are answered; once a request on a new connection written after it is answered, it was read.
  token_meter m(60'000);
  const auto t0 = clk::now();
  const auto r = admit(m, t0, {4'000, 1'000, 1'000, 1'000});
  const auto &on_new = r[0], &kept = r[1], &fresh_later = r[2], &kept_later = r[3];
  m.written(on_new, t0, false);
  m.written(kept, t0 + 1ms, true);
  m.settle(kept, 1'000, t0 + 5ms);
  m.read(20'000, 60'000, t0 + 1ms, t0 + 5ms);
  // The server's 20,000 less the 4,000 it may not have read and the 2,000 not written yet.
  CHECK(m.level(t0 + 5ms) == 14'000);
  // Still unseen seconds later, as long as no later new connection was answered.
  m.written(fresh_later, t0 + 10ms, false);
  m.written(kept_later, t0 + 3s, true);
  m.read(20'000, 60'000, t0 + 3s, t0 + 3s + 5ms);
  CHECK(m.level(t0 + 3s + 5ms) == 20'000 - 4'000 - 1'000);
  // A request on a new connection written after it is answered: the server accepted that far.
  m.settle(fresh_later, 1'000, t0 + 3s + 6ms, true);
  m.settle(kept_later, 1'000, t0 + 3s + 7ms);
  m.read(20'000, 60'000, t0 + 3s + 1ms, t0 + 3s + 7ms);
  CHECK(m.level(t0 + 3s + 7ms) == 20'000);
}

TEST_CASE("a new connection the server never answered says nothing of what it accepted", "[tokens]") {
  // Its handshake dropped (a full listen queue): the connections opened before it may be unread.
  token_meter m(60'000);
  const auto t0 = clk::now();
  const auto r = admit(m, t0, {4'000, 1'000, 1'000});
  const auto &earlier = r[0], &dropped = r[1], &kept = r[2];
  m.written(earlier, t0, false);
  m.written(dropped, t0 + 1ms, false);
  m.settle(dropped, 0, t0 + 20ms);  // no answer: given back, not a sign of acceptance
  m.written(kept, t0 + 2ms, true);
  m.settle(kept, 1'000, t0 + 21ms, true);
  m.read(20'000, 60'000, t0 + 2ms, t0 + 21ms);
  CHECK(m.level(t0 + 21ms) == 16'000);  // `earlier` still held unseen
}

TEST_CASE("a request written again on a new connection is as its last write says", "[tokens]") {
  // Its kept-alive connection had gone stale: it went again on a new one.
  token_meter m(60'000);
  const auto t0 = clk::now();
  const auto r = admit(m, t0, {4'000, 1'000});
  const auto &again = r[0], &kept = r[1];
  m.written(again, t0, true);
  m.written(again, t0 + 1ms, false);
  m.written(kept, t0 + 2ms, true);
  m.settle(kept, 1'000, t0 + 5ms);
  m.read(20'000, 60'000, t0 + 2ms, t0 + 5ms);
  CHECK(m.level(t0 + 5ms) == 16'000);  // taken for seen at its first write, it was counted nowhere
}

TEST_CASE("a limit the headers state meters an API that had none, and a given one caps it", "[tokens]") {
  token_meter m;
  CHECK_FALSE(m.active());
  CHECK(m.watching());
  const auto t0 = clk::now();
  auto early = m.try_take(2'000, t0).ticket;  // no limit yet: admitted, remembered
  REQUIRE(early);
  auto first = m.try_take(100, t0 + 1ms).ticket;
  REQUIRE(first);
  m.read(50'000, 60'000, t0 - 1ms, t0 + 5ms);  // answered before both went out
  CHECK(m.active());
  CHECK(m.per_minute() == 60'000);
  CHECK(m.level(t0 + 5ms) == 50'000 - 2'100);
  token_meter capped(30'000);
  capped.read(1'000'000, 1'000'000, t0, t0);
  CHECK(capped.per_minute() == 30'000);
  // An API that states no limit: after 32 answers, not watched (no request counted from then on).
  token_meter plain;
  for (int i = 0; i < 32; ++i) plain.answered_unmetered();
  CHECK_FALSE(plain.watching());
}

TEST_CASE("what an answer means for its tokens: usage settles, a refusal gives all back, a lost answer keeps them",
          "[tokens]") {
  const auto t0 = clk::now();
  auto ticket_of = [&](token_meter& m, std::int64_t n) { return token_ticket(&m, *m.try_take(n, t0).ticket); };
  response ok;
  ok.status = 200;
  ok.body = R"({"usage":{"prompt_tokens":90,"completion_tokens":10,"total_tokens":100}})";
  response refused;
  refused.status = 429;
  response lost;
  lost.ec = boost::asio::error::timed_out;
  lost.stage = "read";
  response never;
  never.ec = boost::asio::error::connection_refused;
  never.stage = "connect";
  {
    token_meter m(60'000);
    ticket_of(m, 10'000).settle(ok, 400);
    CHECK(m.used_total() == 100);
    CHECK(m.level(clk::now()) >= 59'900 - 1);
    CHECK(m.estimator.bytes_per_token() == Approx(400.0 / 90));
  }
  for (auto* r : {&refused, &never}) {
    token_meter m(60'000);
    ticket_of(m, 10'000).settle(*r, 400);
    CHECK(m.level(clk::now()) == 60'000);
  }
  {
    token_meter m(60'000);
    ticket_of(m, 10'000).settle(lost, 400);  // the API may have charged it
    CHECK(m.level(clk::now()) <= 50'000 + 100);
  }
  {
    token_meter m(60'000);
    { auto dropped = ticket_of(m, 10'000); }  // its call cancelled before it went out
    CHECK(m.level(clk::now()) == 60'000);
  }
  CHECK(too_large_for_limit(9'000, 6'000).find("more than the API's whole limit of 6000 tokens a minute") != std::string::npos);
}

TEST_CASE("Anthropic's 529 'overloaded' that says when is its capacity: the breaker counts it, the item spends no attempt",
          "[tokens]") {
  response overloaded;
  overloaded.status = 529;
  overloaded.body = R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
  const auto o = judge_exchange(overloaded, client_options{}, std::chrono::milliseconds(100), std::chrono::milliseconds(3000),
                                /*api_pace=*/true);
  REQUIRE(o);
  CHECK(o->k == dibs::outcome::kind::retry);
  CHECK(o->api_down);
  CHECK(o->paced);
  // A bare 529 (no retry-after) spends the attempt: a server that answers 529 for good still
  // ends the run.
  const auto bare = judge_exchange(overloaded, client_options{}, std::chrono::milliseconds(100), std::chrono::milliseconds(0));
  REQUIRE(bare);
  CHECK(bare->api_down);
  CHECK_FALSE(bare->paced);
  response down;
  down.status = 503;
  const auto d = judge_exchange(down, client_options{}, std::chrono::milliseconds(100), std::chrono::milliseconds(0));
  REQUIRE(d);
  CHECK(d->api_down);
  CHECK_FALSE(d->paced);  // an outage that lasts still ends the run
}

TEST_CASE("a limit given below the one the API states holds: the server's count only ever holds the process back", "[tokens]") {
  token_meter m(10'000);
  const auto t0 = clk::now();
  for (int i = 0; i < 9; ++i) REQUIRE(m.try_take(1'000, t0).ticket);
  CHECK_FALSE(m.try_take(1'000, t0).ticket);
  // The server's bucket of 1,000,000 has 900,000 left: no room for this process beyond its own 10,000.
  m.read(900'000, 1'000'000, t0, t0 + 1ms);
  CHECK(m.per_minute() == 10'000);
  CHECK_FALSE(m.try_take(1'000, t0 + 1ms).ticket);
  // Other clients spent it all: the process waits for the server's refill too.
  m.read(0, 1'000'000, t0 + 2ms, t0 + 2ms);
  CHECK(m.try_take(100, t0 + 2ms).retry_at > t0 + 50s);
}

TEST_CASE("Anthropic's input and output buckets apart: the meter holds the one that binds at its requests' mix", "[tokens]") {
  token_meter m;
  CHECK(m.input_share() == 0);  // no request yet: no mix, the tightest bucket is read
  // Requests of about 2,000 prompt tokens (8,000 bytes) and max_tokens 500: 0.8 input.
  for (int i = 0; i < 4; ++i) REQUIRE(token_charge(m, 8'000, 500) == 2'500);
  CHECK(m.input_share() == Approx(0.8));
  response r;
  r.status = 200;
  r.headers = {{"anthropic-ratelimit-tokens-limit", "80000"},        {"anthropic-ratelimit-tokens-remaining", "80000"},
               {"anthropic-ratelimit-input-tokens-limit", "400000"}, {"anthropic-ratelimit-input-tokens-remaining", "400000"},
               {"anthropic-ratelimit-output-tokens-limit", "80000"}, {"anthropic-ratelimit-output-tokens-remaining", "80000"}};
  const auto t0 = clk::now();
  read_token_headers(m, r, t0, true);
  // 400,000 whole tokens a minute (160 requests: the output bucket's 80,000 / 500), not the
  // tightest bucket's 80,000 (32 requests).
  CHECK(m.per_minute() == Approx(400'000));
  int admitted = 0;
  while (m.try_take(2'500, t0).ticket) ++admitted;
  CHECK(admitted >= 150);
  CHECK(admitted <= 160);
}

TEST_CASE("input and output apart: a max_tokens larger than the whole output limit is never sent, whatever the mix", "[tokens]") {
  token_meter m;
  for (int i = 0; i < 4; ++i) REQUIRE(token_charge(m, 8'000, 500) == 2'500);  // 0.8 input
  response r;
  r.status = 200;
  r.headers = {{"anthropic-ratelimit-input-tokens-limit", "400000"}, {"anthropic-ratelimit-input-tokens-remaining", "400000"},
               {"anthropic-ratelimit-output-tokens-limit", "8000"}, {"anthropic-ratelimit-output-tokens-remaining", "8000"}};
  read_token_headers(m, r, clk::now(), true);
  REQUIRE(m.capacity() == 40'000);  // whole tokens at the mix: 8,000 / 0.2
  // 12,000 whole tokens fit the mix's 40,000, but 10,000 of them are output: more than 8,000.
  CHECK_THAT(never_admitted(m, 8'000, 10'000), Catch::Contains("10000 output tokens") && Catch::Contains("8000"));
  CHECK(never_admitted(m, 8'000, 500).empty());
  // A prompt larger than the whole input limit, where the mix is mostly output.
  token_meter out_heavy;
  for (int i = 0; i < 4; ++i) REQUIRE(token_charge(out_heavy, 800, 800) == 1'000);  // 0.2 input
  r.headers = {{"anthropic-ratelimit-input-tokens-limit", "10000"}, {"anthropic-ratelimit-input-tokens-remaining", "10000"},
               {"anthropic-ratelimit-output-tokens-limit", "400000"}, {"anthropic-ratelimit-output-tokens-remaining", "400000"}};
  read_token_headers(out_heavy, r, clk::now(), true);
  REQUIRE(out_heavy.capacity() == 50'000);
  CHECK_THAT(never_admitted(out_heavy, 48'000, 100), Catch::Contains("12000 input tokens") && Catch::Contains("10000"));
  CHECK(never_admitted(out_heavy, 8'000, 100).empty());
  // One bucket (OpenAI's): the whole limit alone decides.
  token_meter one(10'000);
  CHECK(never_admitted(one, 8'000, 5'000).empty());
  CHECK_THAT(never_admitted(one, 8'000, 9'000), Catch::Contains("more than the API's whole limit"));
}

TEST_CASE("absurd numbers from an answer stay numbers: no overflow, no wait of years", "[tokens]") {
  token_meter m(60'000);
  const auto t0 = clk::now();
  auto a = m.try_take(1'000, t0).ticket;
  REQUIRE(a);
  m.settle(*a, std::int64_t{1} << 61, t0);  // a usage no request had
  const auto t = m.try_take(1'000, t0);
  CHECK(t.retry_at < t0 + 10min);
  m.read(-5, std::nullopt, t0 + 1ms, t0 + 1ms);  // a remaining below zero
  CHECK(m.try_take(1'000, t0 + 1ms).retry_at < t0 + 10min);
  const std::string body = R"({"max_tokens": 100, "m": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})";
  CHECK(least_token_charge(body) == 100 + static_cast<std::int64_t>(body.size() / 4));
}

namespace {
// A provider's bucket as llm_api.py holds it: continuous refill, a request charged on arrival and
// settled on its answer; and N processes, each with its own meter, reading its answers' headers.
struct shared_key_run {
  double refused_share = 0;
  double used_share = 0;  // of a full bucket plus the refill over the run
};

shared_key_run run_shared_key(int processes, int seconds) {
  const double cap = 60'000, rate = cap / 60;  // tokens a second
  const std::int64_t charge = 200, used = 150;
  const auto latency = std::chrono::milliseconds(300);
  double level = cap;
  std::vector<token_meter> meters(static_cast<std::size_t>(processes));
  struct call {
    std::size_t process;
    token_meter::admitted a;
    clk::time_point answer_at;
    bool refused;
  };
  std::deque<call> in_flight;
  std::vector<int> flying(static_cast<std::size_t>(processes), 0);
  std::uint64_t calls = 0, refused = 0, spent = 0;
  const auto t0 = clk::time_point{} + std::chrono::hours(1);
  const auto step = std::chrono::milliseconds(5);
  for (auto now = t0; now < t0 + std::chrono::seconds(seconds); now += step) {
    level = std::min(cap, level + rate * std::chrono::duration<double>(step).count());
    // Answers due: settled at the server first, then read by their process.
    std::sort(in_flight.begin(), in_flight.end(), [](const call& a, const call& b) { return a.answer_at < b.answer_at; });
    while (!in_flight.empty() && in_flight.front().answer_at <= now) {
      const auto c = in_flight.front();
      in_flight.pop_front();
      --flying[c.process];
      auto& m = meters[c.process];
      if (c.refused) {
        m.give_back(c.a, now);
      } else {
        level = std::min(cap, level + static_cast<double>(charge - used));
        spent += used;
        m.settle(c.a, used, now);
      }
      m.read(static_cast<std::int64_t>(level), static_cast<std::int64_t>(cap), c.a.at, now);
    }
    // Each process sends what its meter admits, 40 at most in flight, from 4 doubled every round
    // trip (the adaptive limit's slow start).
    const auto rounds = (now - t0) / latency;
    const int most = static_cast<int>(std::min<std::int64_t>(40, std::int64_t{4} << std::min<std::int64_t>(rounds, 8)));
    for (std::size_t p = 0; p < meters.size(); ++p)
      while (flying[p] < most) {
        auto t = meters[p].try_take(charge, now);
        if (!t.ticket) break;
        meters[p].written(*t.ticket, now);
        ++calls;
        ++flying[p];
        const bool admitted = level >= static_cast<double>(charge);
        if (admitted) level -= static_cast<double>(charge);
        else ++refused;
        in_flight.push_back({p, *t.ticket, now + (admitted ? latency : std::chrono::milliseconds(5)), !admitted});
      }
  }
  return {static_cast<double>(refused) / static_cast<double>(calls), static_cast<double>(spent) / (cap + rate * seconds)};
}
}  // namespace

TEST_CASE("processes sharing one key, each reading the headers: what is left is taken in each one's share", "[tokens]") {
  // In virtual time, against a bucket held as the provider holds it (llm_api.py's rule), each
  // process at the adaptive limit's slow start. Without the shares, four processes that saw the
  // same reading each took all that was left: 24% of calls refused here (12% against
  // llm_api.py). With them, none for one, two or four. (Eight are refused more: a process starved
  // to the floor of its share reads the refill as its own; a known limit.)
  for (const int n : {1, 2, 4}) {
    INFO(n << " process(es)");
    const auto r = run_shared_key(n, 120);
    UNSCOPED_INFO("refused " << r.refused_share << " used " << r.used_share);
    CHECK(r.refused_share == 0);
    CHECK(r.used_share >= 0.95);
  }
}
