// How a shard writes a buffer of outcomes (completions, releases or failures) to the store.
//
// One bad item must cost that item, never the run: a store that refuses one row refuses the whole
// statement, and retrying that statement forever blocked a shard (its leases renewed, its buffer
// growing). So the buffer goes out in chunks capped in items and bytes (a server also has a
// largest statement it accepts), and a chunk the store refuses for what it carries
// (`store_refused`) is split in halves until each refused item stands alone: that item is handed
// to `on_refused`, everything else lands. A store that denies the right to write (`store_denied`)
// or fails otherwise (unavailable now) stops the write: the items not yet written go back to the
// front of the buffer, in order, and the status says which it was.
#pragma once

#include <dibs/net.hpp>
#include <dibs/store.hpp>

#include <cstddef>
#include <deque>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dibs {

struct chunk_limits {
  std::size_t max_items = 100;
  std::size_t max_bytes = 4 << 20;
};

// What a store write of an item carries, roughly, in bytes (for the byte cap).
inline std::size_t write_bytes(const completion& c) { return c.result_json.size() + c.ref.id.size() + c.ref.by.size() + 32; }
inline std::size_t write_bytes(const release_item& r) { return r.why.size() + r.ref.id.size() + r.ref.by.size() + 32; }
inline std::size_t write_bytes(const failure& f) { return f.reason.size() + f.ref.id.size() + f.ref.by.size() + 32; }

// Splits `items` into chunks of at most `max_items` items and, unless one item alone is larger,
// at most `max_bytes` bytes; order kept.
template <class Item>
std::deque<std::vector<Item>> split_chunks(std::vector<Item> items, chunk_limits lim) {
  std::deque<std::vector<Item>> out;
  std::size_t bytes = 0;
  for (auto& x : items) {
    const auto b = write_bytes(x);
    if (out.empty() || out.back().size() >= lim.max_items || (!out.back().empty() && bytes + b > lim.max_bytes)) {
      out.emplace_back();
      bytes = 0;
    }
    bytes += b;
    out.back().push_back(std::move(x));
  }
  return out;
}

struct chunked_write_status {
  bool ok = true;         // every chunk landed or was refused item by item
  bool denied = false;    // not ok because the store denied the right to write (store_denied)
  std::string error;      // why not: the store's error
  std::size_t refused = 0;
};

// Writes `buffer` (which it empties) through `write(std::vector<Item>) -> awaitable<Result>`;
// `on_landed(const std::vector<Item>&, Result&)` hears of each chunk written, `on_refused(Item&,
// const std::string& why)` of each item the store refused alone. On an unavailable store the
// unwritten items are put back at the front of `buffer` (ahead of anything added meanwhile).
template <class Item, class Write, class Landed, class Refused>
awaitable<chunked_write_status> write_in_chunks(std::vector<Item>& buffer, chunk_limits lim, Write write,
                                                Landed on_landed, Refused on_refused) {
  chunked_write_status status;
  auto chunks = split_chunks(std::exchange(buffer, {}), lim);
  while (!chunks.empty()) {
    auto chunk = std::move(chunks.front());
    chunks.pop_front();
    std::optional<std::string> refusal;
    try {
      auto sent = chunk;  // the store takes its batch by value; named: no temporaries in a co_await (g++ 12)
      auto result = co_await write(std::move(sent));
      on_landed(chunk, result);
      continue;
    } catch (const store_refused& e) {
      refusal = e.what();
    } catch (const std::exception& e) {
      status.ok = false;
      status.denied = dynamic_cast<const store_denied*>(&e) != nullptr;
      status.error = e.what();
      std::vector<Item> unwritten = std::move(chunk);
      for (auto& c : chunks) unwritten.insert(unwritten.end(), std::make_move_iterator(c.begin()), std::make_move_iterator(c.end()));
      unwritten.insert(unwritten.end(), std::make_move_iterator(buffer.begin()), std::make_move_iterator(buffer.end()));
      buffer = std::move(unwritten);
      co_return status;
    }
    if (chunk.size() == 1) {
      ++status.refused;
      on_refused(chunk.front(), *refusal);
      continue;
    }
    // Bisect: the halves go first, in order, so the refused items are found in O(k log n) writes.
    const auto half = chunk.size() / 2;
    std::vector<Item> second(std::make_move_iterator(chunk.begin() + static_cast<std::ptrdiff_t>(half)),
                             std::make_move_iterator(chunk.end()));
    chunk.resize(half);
    chunks.push_front(std::move(second));
    chunks.push_front(std::move(chunk));
  }
  co_return status;
}

}  // namespace dibs
