// The Asio names dibs uses everywhere, in one light header.
// Asio and Beast are compiled once (BOOST_ASIO_SEPARATE_COMPILATION), so this only declares.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

namespace dibs {
namespace net = boost::asio;

template <class T>
using awaitable = net::awaitable<T>;
}  // namespace dibs
