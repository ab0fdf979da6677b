// The offload adapter: blocking calls run on the pool, and the awaiting coroutine resumes on its
// own executor with the value or the exception.
#include "support/run_sync.hpp"

#include <dibs/offload.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>

using namespace dibs;

TEST_CASE("offload runs the call on the pool and resumes on the caller's thread", "[offload]") {
  offload_pool pool(2);
  net::io_context ioc(1);
  std::thread::id shard_thread, call_thread, resumed_thread;
  auto body = [&]() -> awaitable<int> {
    shard_thread = std::this_thread::get_id();
    int v = co_await offload(pool, [&] {
      call_thread = std::this_thread::get_id();
      return 41;
    });
    resumed_thread = std::this_thread::get_id();
    co_return v + 1;
  };
  auto fut = net::co_spawn(ioc, body(), net::use_future);
  ioc.run();
  CHECK(fut.get() == 42);
  CHECK(call_thread != shard_thread);
  CHECK(resumed_thread == shard_thread);
}

TEST_CASE("offload rethrows the call's exception in the coroutine", "[offload]") {
  offload_pool pool(1);
  auto body = [&]() -> awaitable<std::string> {
    try {
      co_await offload(pool, []() -> int { throw std::runtime_error("server went away"); });
    } catch (const std::runtime_error& e) {
      co_return std::string("caught: ") + e.what();
    }
    co_return "not thrown";
  };
  CHECK(test::run_sync(body()) == "caught: server went away");
}

TEST_CASE("offload handles void calls and many concurrent awaiters", "[offload]") {
  offload_pool pool(3);
  net::io_context ioc(1);
  std::atomic<int> calls{0};
  int resumed = 0;
  auto one = [&]() -> awaitable<void> {
    co_await offload(pool, [&] { ++calls; });
    ++resumed;  // only the io_context's thread touches this: no race if resumption is right
  };
  for (int i = 0; i < 200; ++i) net::co_spawn(ioc, one(), net::detached);
  ioc.run();
  CHECK(calls == 200);
  CHECK(resumed == 200);
}

TEST_CASE("offload takes any completion token: a callback on its executor, a future", "[offload]") {
  offload_pool pool(2);
  SECTION("a callback bound to an io_context runs there, with the result") {
    net::io_context ioc(1);
    std::thread::id ioc_thread, call_thread, callback_thread;
    int got = 0;
    std::exception_ptr error;
    net::post(ioc, [&] {
      ioc_thread = std::this_thread::get_id();
      offload(
          pool,
          [&] {
            call_thread = std::this_thread::get_id();
            return 7;
          },
          net::bind_executor(ioc, [&](std::exception_ptr e, int v) {
            callback_thread = std::this_thread::get_id();
            error = e;
            got = v;
          }));
    });
    ioc.run();  // returns only once the callback ran: the pending result kept the io_context busy
    CHECK(got == 7);
    CHECK_FALSE(error);
    CHECK(call_thread != ioc_thread);
    CHECK(callback_thread == ioc_thread);
  }
  SECTION("use_future: the value, or the call's exception") {
    auto fine = offload(pool, [] { return std::string("row"); }, net::use_future);
    CHECK(fine.get() == "row");
    auto broken = offload(pool, []() -> int { throw std::runtime_error("server went away"); }, net::use_future);
    CHECK_THROWS_WITH(broken.get(), "server went away");
  }
}

TEST_CASE("an io_context dropped as soon as its offloaded result is in is never touched by the pool after", "[offload]") {
  // The pre-flight's pattern: run one handler at a time until the answer is in, then destroy the
  // io_context. The pool thread must not release the caller's work after handing the result over
  // (a use after free, caught by the sanitizer build; a SIGSEGV about one time in 150 otherwise).
  offload_pool pool(2);
  for (int i = 0; i < 2000; ++i) {
    auto ioc = std::make_unique<net::io_context>(1);
    auto body = [&pool]() -> awaitable<int> { co_return co_await offload(pool, [] { return 7; }); };
    auto result = net::co_spawn(*ioc, body(), net::use_future);
    while (result.wait_for(std::chrono::seconds(0)) != std::future_status::ready && ioc->run_one() > 0) {
    }
    REQUIRE(result.get() == 7);
    ioc.reset();  // at once, as the pre-flight's call_path does
  }
}
