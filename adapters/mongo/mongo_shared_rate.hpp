// The shared rate's record on MongoDB (`rate_scope store`; shared_rate_store.hpp): one document
// per API origin, {_id: <origin>, tat_us, paused_until_us}, in the collection `dibs_rate` of the
// store's database. No transaction: each call reads the document, rate_bucket.hpp decides with
// the server's clock (server_clock.hpp: its time from `hello`, plus the steady time since), and
// the new state is written only if the document still holds what was read (a compare-and-set:
// update_one filtered on the old values, or insert for a new origin); a lost race reads again.
#pragma once

#include <dibs/stores/mongo_store.hpp>

#include "engine/src/shared_rate_store.hpp"

#include <memory>

namespace dibs::mongo {

std::shared_ptr<shared_rate_store> make_mongo_shared_rate(std::shared_ptr<mongo_store> store);

}  // namespace dibs::mongo
