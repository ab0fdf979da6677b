// The calls a shard runs (engine/src/running_calls.hpp): a deadline cancels its own call and
// marks it abandoned; cancel_all cancels the others, which are not abandoned; an ended call is
// erased. Calls wait on timers far longer than the test: only cancellation ends them.
#include "engine/src/running_calls.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>

namespace net = boost::asio;
using dibs::running_calls;
using ms = std::chrono::milliseconds;

namespace {
struct call_end {
  bool aborted = false;
  bool abandoned = false;
};

// A call that waits an hour unless cancelled, then records how it ended, as a pipeline does.
dibs::awaitable<void> long_call(running_calls& calls, std::uint64_t id, net::io_context& ioc,
                                std::map<std::uint64_t, call_end>& ends) {
  net::steady_timer t(ioc, std::chrono::hours(1));
  auto [ec] = co_await t.async_wait(net::as_tuple(net::use_awaitable));
  ends[id] = call_end{ec == net::error::operation_aborted, calls.abandoned(id)};
  calls.finished(id);
}
}  // namespace

TEST_CASE("running calls: a deadline cancels its call alone, as abandoned, and cancel_all the rest", "[running_calls]") {
  net::io_context ioc;
  running_calls calls(ioc, ms(5));
  std::map<std::uint64_t, call_end> ends;
  const auto timed = calls.start([&](std::uint64_t id) { return long_call(calls, id, ioc, ends); });
  const auto other = calls.start([&](std::uint64_t id) { return long_call(calls, id, ioc, ends); });
  CHECK(timed != other);
  calls.arm_deadline(timed);
  while (!ends.count(timed) && ioc.run_one_for(std::chrono::seconds(30)) > 0) {
  }
  ioc.poll();  // whatever else is ready by now
  REQUIRE(ends.count(timed) == 1);
  CHECK(ends.count(other) == 0);  // the deadline cancelled its own call alone
  // Then the shard stops: every other call is cancelled.
  calls.cancel_all();
  ioc.run_for(std::chrono::seconds(30));
  REQUIRE(ends.size() == 2);
  CHECK(ends[timed].aborted);
  CHECK(ends[timed].abandoned);
  CHECK(ends[other].aborted);
  CHECK_FALSE(ends[other].abandoned);
  CHECK_FALSE(calls.abandoned(timed));  // ended calls are erased
}

TEST_CASE("running calls: without --max-processing no deadline is armed", "[running_calls]") {
  net::io_context ioc;
  running_calls calls(ioc, ms(0));
  std::map<std::uint64_t, call_end> ends;
  const auto id = calls.start([&](std::uint64_t id) { return long_call(calls, id, ioc, ends); });
  calls.arm_deadline(id);
  CHECK(ioc.run_for(ms(50)) > 0);  // the call started and is still waiting
  CHECK(ends.empty());
  calls.cancel_all();
  ioc.restart();
  ioc.run_for(std::chrono::seconds(30));
  REQUIRE(ends.size() == 1);
  CHECK(ends[id].aborted);
  CHECK_FALSE(ends[id].abandoned);
}
