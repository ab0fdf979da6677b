// `--reuse-answers store` on MongoDB: answers kept in the collection dibs_answers serve the next
// run, each document its own address's, and age (support/stored_answers_case.hpp).
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"
#include "support/stored_answers_case.hpp"

#include <dibs/stores/mongo_store.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <catch2/catch.hpp>

#include <simdjson.h>

using namespace dibs;

TEST_CASE("the next dibs enrich takes MongoDB's kept answers and asks the API nothing", "[mongo][reuse][stored-answers]") {
  test::mongo_collection c("kept");
  auto& s = c.s;
  test::check_answers_kept_in_store({
      c.where(),
      [&] { mongo::run_command(s, R"({"delete": "dibs_answers", "deletes": [{"q": {}, "limit": 0}]})"); },
      [&] {
        mongo::run_command(
            s, R"({"update": "dibs_answers", "updates": [{"q": {}, "u": {"$inc": {"stored_at_ms": -7200000}}, "multi": true}]})");
      },
      [&] {
        long wrong = 0;
        simdjson::dom::parser parser;
        for (const auto& doc : mongo::documents(s)) {
          char* text = bson_as_relaxed_extended_json(doc.get(), nullptr);
          const std::string json = text ? text : "";
          bson_free(text);
          simdjson::dom::element d;
          if (parser.parse(json).get(d)) {
            ++wrong;
            continue;
          }
          std::string_view ip, query;
          if (d["location"].is_null()) continue;
          if (d["originatingIp"].get(ip) || d["location"]["query"].get(query) || ip != query) ++wrong;
        }
        return wrong;
      },
  });
}
