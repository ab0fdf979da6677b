// Runs one awaitable to completion on a private io_context, for tests of async pieces.
#pragma once

#include <dibs/net.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <utility>

namespace dibs::test {

template <class T>
T run_sync(awaitable<T> a) {
  net::io_context ioc(1);
  auto fut = net::co_spawn(ioc, std::move(a), net::use_future);
  ioc.run();
  return fut.get();
}

}  // namespace dibs::test
