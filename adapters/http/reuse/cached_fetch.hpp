// A value the controls read from the store (its counts, its lease holders, its failure reasons),
// fetched at most once per `max_age` however often the pages are scraped, one fetch at a time:
// requests meanwhile get the last value (or wait, up to `wait`, for the first one). A fetch that
// throws leaves nullopt and its message: a dead store must not take the status page with it.
// One thread only (the control server's io_context).
#pragma once

#include "engine/src/async_event.hpp"
#include <dibs/net.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <string>

namespace dibs::http {

template <class T>
struct cached_value {
  std::optional<T> value;
  std::string error;  // why the last fetch failed ("" when it did not)
  std::optional<std::chrono::steady_clock::time_point> at;
  bool fetching = false;
  async_event fetched;

  // The next read fetches again (a POST changed what it shows).
  void invalidate() { at.reset(); }

  // `fetch()` returns an awaitable<T>; it is called (and awaited) only when the value is stale.
  template <class Fetch>
  awaitable<std::optional<T>> get(std::chrono::milliseconds max_age, std::chrono::milliseconds wait, Fetch fetch) {
    using clock = std::chrono::steady_clock;
    if (at && clock::now() - *at < max_age) co_return value;
    if (fetching) {
      if (!at) co_await fetched.wait_for(wait);
      co_return value;
    }
    fetching = true;
    try {
      value = co_await fetch();
      error.clear();
    } catch (const std::exception& e) {
      value = std::nullopt;
      error = e.what();
    }
    at = clock::now();
    fetching = false;
    fetched.notify();
    co_return value;
  }
};

}  // namespace dibs::http
