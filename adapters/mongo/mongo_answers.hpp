// The answers kept in the store on MongoDB (`reuse_answers store`; answer_store.hpp): one
// document per distinct request, {_id: <digest>, request, answer: <the JSON text>, stored_at_ms},
// in the collection `dibs_answers` of the store's database. stored_at_ms is the server's time as
// this process estimates it (server_clock.hpp, like the shared rate): processes whose estimates
// differ by d disagree by d about an answer's age at the edge of answer_ttl. A keep is one
// upserting update_one.
#pragma once

#include <dibs/stores/mongo_store.hpp>

#include "engine/src/answer_store.hpp"

#include <memory>

namespace dibs::mongo {

std::shared_ptr<answer_store> make_mongo_answers(std::shared_ptr<mongo_store> store);

}  // namespace dibs::mongo
