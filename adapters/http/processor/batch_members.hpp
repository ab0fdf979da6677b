// The parts of a batch_processor that its two files share (batch_processor.cpp forms, sends and
// halves the batches; batch_settle.cpp hands each row its outcome from an answer). Internal.
#pragma once

#include <dibs/http/batch_processor.hpp>

#include "batch_items.hpp"

#include <boost/asio/steady_timer.hpp>
#include <simdjson.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dibs::http {

struct batch_processor::member {
  explicit member(const net::any_io_executor& ex) : wake(ex) {}
  std::string element;  // this item's element of the body
  std::string key;      // the key its answer names (with an echo member; else empty)
  int attempts = 0;
  job claimed;  // for work_started: its id and lease token
  std::optional<outcome> result;
  net::steady_timer wake;  // cancelled when `result` is set
  bool gone = false;       // its pipeline was abandoned (max_processing): asked again elsewhere
  const batch* of = nullptr;  // the batch it joined (alive while its leader sends for it)
};

struct batch_processor::batch {
  explicit batch(const net::any_io_executor& ex) : full(ex) {}
  std::vector<std::shared_ptr<member>> members;  // the leader first
  std::size_t bytes = 0;  // the body's so far
  bool closed = false;
  std::size_t rows = 0;  // it closes at this many (rows_a_batch(), or a trial's)
  bool trial = false;    // it tries a larger size before every batch takes it (grow_to)
  bool overflowed = false;      // closed by its bytes (or tokens) before its rows
  bool trial_settled = false;   // its trial was ended by its judgement (judge_growth)
  net::steady_timer full;  // the leader's linger; cancelled when the batch fills
};

struct batch_processor::json_parser {
  simdjson::ondemand::parser inner;  // ip-api's status check of an item's answer
  simdjson::dom::parser dom;
  std::optional<batch_item_pointer> item;  // where each item's answer is
};

}  // namespace dibs::http
