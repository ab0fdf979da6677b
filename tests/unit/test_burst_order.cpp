#include "adapters/http/client/burst_order.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include <random>

using dibs::http::burst_answer;
using dibs::http::queued_in_send_order;

namespace {
// `n` requests sent 10 us apart to a server that serves `at_once` at a time, `service_us` each.
std::vector<burst_answer> served_in_turn(int n, int at_once, std::uint32_t service_us) {
  std::vector<burst_answer> out;
  for (int i = 0; i < n; ++i)
    out.push_back({i * 10, static_cast<std::uint32_t>((i / at_once + 1) * service_us)});
  return out;
}
}  // namespace

TEST_CASE("a burst answered one after the other in its send order says the server queues", "[adaptive][burst]") {
  // The first 8 answers of 16 sent together to a server serving one at a time, 58 ms each.
  const auto factor = queued_in_send_order(served_in_turn(8, 1, 58'000));
  REQUIRE(factor);
  // Fastest 58 ms, median (4th) 232 ms: twice the share served at once, 0.5.
  CHECK(*factor == Approx(0.5));
  // Two at a time: the answers come in pairs, still in their send order.
  const auto pairs = queued_in_send_order(served_in_turn(8, 2, 58'000));
  REQUIRE(pairs);
  CHECK(*pairs > *factor);
  // Deep queues are cut by eight at most.
  std::vector<burst_answer> deep;
  for (int i = 0; i < 8; ++i) deep.push_back({i, static_cast<std::uint32_t>(1'000 + i * 100'000)});
  CHECK(queued_in_send_order(deep) == 1.0 / 8);
}

TEST_CASE("a request of the burst that left late (its connection waited) does not hide the queue", "[adaptive][burst]") {
  // Measured against a server serving one at a time behind Python's listen backlog of 5: the
  // second answer's request left 27 ms after the rest, met no queue, and came back second.
  const std::vector<burst_answer> burst{{63128818489, 29135},  {63128845814, 28956},  {63128819612, 83474},
                                        {63128819675, 109733}, {63128821071, 135836}, {63128821316, 162577},
                                        {63128821337, 189888}, {63128823275, 215182}};
  const auto factor = queued_in_send_order(burst);
  REQUIRE(factor);
  CHECK(*factor < 0.9);
  // Two of the eight late (40 ms, past half the fastest answer), queued behind the rest in turn:
  // all eight rise with their send order, but only six left together, too few to read.
  auto two_late = served_in_turn(8, 1, 58'000);
  for (int i = 6; i < 8; ++i) {
    two_late[i].sent_us = 40'000;
    two_late[i].latency_us = static_cast<std::uint32_t>((i + 1) * 58'000 - 40'000);
  }
  CHECK_FALSE(queued_in_send_order(two_late));
}

TEST_CASE("a fast server's queue is read though the burst's sends spread over a few ms", "[adaptive][burst]") {
  // New connections' handshakes spread the sends over 2.8 ms; the server serves one at a time,
  // 2 ms each, in the order they came: half the fastest answer (1 ms) would keep only three.
  std::vector<burst_answer> burst;
  std::int64_t free_at = 0;
  for (int i = 0; i < 8; ++i) {
    const std::int64_t sent = i * 400;
    free_at = std::max(free_at, sent) + 2'000;
    burst.push_back({sent, static_cast<std::uint32_t>(free_at - sent)});
  }
  CHECK(queued_in_send_order(burst));
}

TEST_CASE("a burst answered in any order, or all alike, says nothing of a queue", "[adaptive][burst]") {
  // An API whose latency spreads from 10 to 90 ms, whatever the order: its fastest come first.
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> spread(10'000, 90'000);
  int said_queue = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<burst_answer> answers;
    for (int i = 0; i < 16; ++i) answers.push_back({i * 10, spread(rng)});
    std::sort(answers.begin(), answers.end(), [](auto& a, auto& b) { return a.latency_us < b.latency_us; });
    answers.resize(8);  // the round is judged on its first 8 answers
    if (queued_in_send_order(answers)) ++said_queue;
  }
  CHECK(said_queue <= 6);  // a chance order: about 1 in 100 such bursts (1.05% of 100,000 simulated)
  // A server serving all at once: every answer 100 ms, whatever order they were sent in.
  CHECK_FALSE(queued_in_send_order(served_in_turn(16, 16, 100'000)));
  // In order, but the slowest under twice the fastest: a spread, not a queue.
  std::vector<burst_answer> gentle;
  for (int i = 0; i < 8; ++i) gentle.push_back({i, static_cast<std::uint32_t>(100'000 + i * 5'000)});
  CHECK_FALSE(queued_in_send_order(gentle));
  // Sent at one instant: no order to read.
  auto same_time = served_in_turn(8, 1, 58'000);
  for (auto& a : same_time) a.sent_us = 0;
  CHECK_FALSE(queued_in_send_order(same_time));
  // Too few answers to read an order in.
  CHECK_FALSE(queued_in_send_order(served_in_turn(7, 1, 58'000)));
}
