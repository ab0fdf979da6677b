// dibs init's record for one collection (dibs/recorded_settings.hpp), in the collection
// `dibs_settings` of the store's database: {_id: <collection>, source, target, lock_field,
// recorded_at}. Applied when the store opens, before anything reads the field names.
#pragma once

#include <dibs/recorded_settings.hpp>

namespace dibs::mongo {

struct store_context;
struct mongo_options;

// The names of `o` as the record keeps them (and as a command says it used them).
settings_record in_effect_settings(const mongo_options& o);

// The record for the store's collection; empty when there is none (or dibs_settings is missing).
settings_record read_settings_record(store_context& ctx);
// Replaces the record with the names in effect (dibs init).
void write_settings_record(store_context& ctx);
// ctx.opts.names from the record where the user gave no flag (ctx.opts.settings); throws
// setting_conflict for a flag that contradicts it. Fills ctx.opts.settings.result.
settings_record apply_settings_record(store_context& ctx);  // returns the record read

}  // namespace dibs::mongo
