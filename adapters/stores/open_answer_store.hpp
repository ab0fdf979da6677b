// The answers kept in a store (`reuse_answers store`; answer_store.hpp), over the store's own
// records (own_records.hpp): MySQL/MariaDB and PostgreSQL keep them in their table `dibs_answers`
// (created on first use), MongoDB in the collection `dibs_answers`. nullptr for a JSON Lines file
// (one process works on it; its answers stay in the process's cache).
#pragma once

#include <dibs/admin_store.hpp>
#include <dibs/stores/own_records.hpp>
#include "engine/src/answer_store.hpp"

#include <memory>

namespace dibs {

// dibs_answers: {digest; request, answer; stored_at}.
extern const record_kind answers_kind;

// Throws the store's error when the table can't be created.
std::shared_ptr<answer_store> open_answer_store(const std::shared_ptr<admin_store>& st);

}  // namespace dibs
