// dibs init's record for one collection (dibs/recorded_settings.hpp), in the collection
// `dibs_settings` of the store's database: {_id: <collection>, source, target, lock_field,
// recorded_at}. Applied when the store opens, before anything reads the field names.
#pragma once

#include <dibs/recorded_settings.hpp>

namespace dibs::mongo {

struct store_context;

// The record for the store's collection; empty when there is none (or dibs_settings is missing).
settings_record read_settings_record(store_context& ctx);
// Replaces the record with the names in effect (dibs init).
void write_settings_record(store_context& ctx);
// ctx.opts.names from the record where the user gave no flag (ctx.opts.settings); throws
// setting_conflict for a flag that contradicts it. Fills ctx.opts.settings.result.
void apply_settings_record(store_context& ctx);

}  // namespace dibs::mongo
