// The MongoDB store's public header stands without the driver's headers: a program that opens a
// store (the CLI, dibs::open_store) compiles without libmongoc's include paths. Included first,
// before anything that could bring the driver in.
#include <dibs/stores/mongo_store.hpp>

#if defined(MONGOC_H) || defined(BSON_H)
#error "include/dibs/stores/mongo_store.hpp includes <mongoc/mongoc.h> or <bson/bson.h>"
#endif

#include <catch2/catch.hpp>

using namespace dibs::mongo;

TEST_CASE("MongoDB: claim strategy names parse back to what they name", "[mongo][header]") {
  for (auto s : {claim_strategy::update_find, claim_strategy::find_and_modify, claim_strategy::batch,
                 claim_strategy::lock_collection})
    CHECK(parse_strategy(to_string(s)) == s);
  CHECK_FALSE(parse_strategy("lock_collection").has_value());
  CHECK(to_string(mongo_options{}.strategy) == "batch");
}
