// The shard's gate (engine/src/gate.hpp): holders count work, close() admits no more.
#include "engine/src/gate.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>
#include <stdexcept>

using dibs::gate;

TEST_CASE("a holder counts while it lives, and leaves once") {
  gate g;
  {
    auto h = g.hold();
    CHECK(g.inside() == 1);
    auto moved = std::move(h);
    CHECK(g.inside() == 1);
    CHECK_FALSE(h.holds());
    moved.leave();
    CHECK(g.inside() == 0);
    moved.leave();
    CHECK(g.inside() == 0);
  }
  CHECK(g.inside() == 0);
}

TEST_CASE("work that ends by an exception still leaves the gate") {
  gate g;
  try {
    auto h = g.hold();
    throw std::runtime_error("the work failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(g.inside() == 0);
}

TEST_CASE("close() waits for what is inside and admits nothing new") {
  boost::asio::io_context ioc;
  gate g;
  std::optional<gate::holder> inside(g.hold());
  bool closed = false;
  auto closing = [&]() -> dibs::awaitable<void> {
    co_await g.close();
    closed = true;
  };
  boost::asio::co_spawn(ioc, closing(), boost::asio::detached);
  ioc.poll();
  CHECK(g.closed());
  CHECK_FALSE(closed);  // one holder is still inside
  CHECK_FALSE(g.try_hold().has_value());
  CHECK_THROWS_AS(g.hold(), std::logic_error);
  inside.reset();
  ioc.run();
  CHECK(closed);
  CHECK(g.inside() == 0);
}
