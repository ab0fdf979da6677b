// What the MySQL/MariaDB store decides around a fenced batch write, as pure functions (tested
// without a server; mysql_store.cpp only sends the statements and reads the rows back):
//
//   plan_fence      which rows to ask about, one `held_rows` query per worker (`by`)
//   settle_fence    from the rows the server locked: which items are held, which lost
//   split_storable  answers refused before any statement (too deep, too large for the server)
//   statement_runs  how many completions go into each UPDATE (each under half max_allowed_packet)
//   release_groups  one release statement per distinct (delay, reason)
//
// An item's id is the row's key as the server prints it (mysql_row_key.hpp). Text that can't be such a
// key names no row dibs handed out, so its lease can't be held: it is reported lost, never written.
#pragma once

#include <adapters/mysql/mysql_row_key.hpp>
#include <adapters/mysql/server_limits.hpp>
#include <adapters/mysql/mysql_protocol.hpp>

#include <dibs/store.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace dibs::mysql {

struct held_query {
  std::string by;             // the worker whose leases these are
  std::vector<row_ref> rows;  // key literal + token, in batch order
};

struct fence_plan {
  std::vector<std::optional<std::string>> row;  // per batch item: its key literal, nullopt if the id names no row
  std::vector<held_query> queries;              // one per worker, in order of first appearance
};

fence_plan plan_fence(const std::vector<lease_ref>& refs, const row_key& key, const quote_fn& quote);

// The one held_rows query of a batch that a single fenced write can carry, or nullptr: one
// worker's, and (`exact`) every item a distinct row -- then the rows the write changed count
// every lease that held, and nothing else.
const held_query* single_fence(const fence_plan& plan, bool exact);

struct fence_outcome {
  std::vector<std::optional<std::string>> held;  // per batch item: its key literal when its lease holds
  std::vector<std::string> lost;                 // the ids of the others, in batch order
  std::size_t applied = 0;                       // how many items hold their lease
};

// `locked`: the keys (as the server printed them: ids) of the rows the server returned for the
// plan's queries (leases still held, locked).
fence_outcome settle_fence(const fence_plan& plan, const std::vector<lease_ref>& refs,
                           const std::unordered_set<std::string>& locked);

struct completion_split {
  std::vector<completion> storable;                       // to write, in batch order
  std::vector<std::pair<std::string, std::string>> refused;  // (id, why): never sent
};

// `keep_answers` false (on_done delete): rows are deleted, no answer is stored, none refused.
completion_split split_storable(const std::vector<completion>& batch, bool keep_answers, const server_limits& lim);

// The completions of one UPDATE, in order: given each quoted answer's size, how many answers each
// statement carries so that none exceeds half of max_allowed_packet (an answer larger than that
// goes alone; split_storable has refused any the server can't take at all).
std::vector<std::size_t> statement_runs(const std::vector<std::size_t>& quoted_bytes, std::size_t max_statement_bytes);

// Held releases grouped by (delay in microseconds, reason): shutdown releases share one statement.
struct release_group {
  std::int64_t delay_us = 0;
  std::string why;
  bool not_attempted = false;
  auto operator<=>(const release_group&) const = default;
};
std::map<release_group, std::vector<std::string>> release_groups(
    const std::vector<release_item>& batch, const fence_outcome& fence);

}  // namespace dibs::mysql
