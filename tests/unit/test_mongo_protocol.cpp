// The MongoDB protocol pieces, read without a server: filters, updates, ids, JSON to BSON.
#include <adapters/mongo/ids.hpp>
#include <adapters/mongo/json_to_bson.hpp>
#include <adapters/mongo/protocol.hpp>

#include "support/fixed_time.hpp"
#include "support/text.hpp"
#include "engine/src/uri_redact.hpp"

#include <catch2/catch.hpp>

using namespace dibs;
using namespace dibs::mongo;

namespace {
using test::compact;
using test::t0;
bson_value_t oid_value(const char* hex) {
  bson_value_t v{};
  v.value_type = BSON_TYPE_OID;
  bson_oid_init_from_string(&v.value.v_oid, hex);
  return v;
}
}  // namespace

TEST_CASE("the claimable filter: target null, not failed, never leased, expired beyond the grace or a retry due", "[mongo][protocol]") {
  field_names f;
  const claim_cutoffs cut{t0, t0 + std::chrono::seconds(2)};
  CHECK(compact(to_json(claimable_filter(f, cut).get())) ==
        R"({"location":null,"_dibs.failed":{"$exists":false},"$and":[)"
        R"({"$or":[{"_dibs.until":{"$exists":false}},{"$or":[{"_dibs.until":{"$lt":{"$date":{"$numberLong":"1700000000000"}}}},)"
        R"({"_dibs.token":{"$numberLong":"0"},"_dibs.until":{"$lt":{"$date":{"$numberLong":"1700000002000"}}}}]}]},)"
        R"({"$or":[{"_dibs":{"$exists":false}},{"_dibs":{"$type":"object"}}]}]})");
  field_names g{"meta.ip", "geo", "lease"};
  CHECK_THAT(to_json(claimable_filter(g, cut).get()), Catch::Contains("\"geo\" : null") && Catch::Contains("lease.until"));
}

TEST_CASE("a batch claim's statement: its candidate, or the first claimable document after it", "[mongo][protocol]") {
  field_names f;
  // The bound, then exactly the claimable filter: the statement leases only what a claim may take.
  CHECK(compact(to_json(claimable_filter_from(f, {t0, t0}, oid_value("65a1b2c3d4e5f60718293a4b")).get())) ==
        R"({"_id":{"$gte":{"$oid":"65a1b2c3d4e5f60718293a4b"}},)" + compact(to_json(claimable_filter(f, {t0, t0}).get())).substr(1));
  bson_value_t number{};
  number.value_type = BSON_TYPE_INT64;
  number.value.v_int64 = 42;
  CHECK_THAT(compact(to_json(claimable_filter_from(f, {t0, t0}, number).get())),
             Catch::StartsWith(R"({"_id":{"$gte":{"$numberLong":"42"}},"location":null)"));
}

TEST_CASE("the lease update sets by, token, until and counts the attempt", "[mongo][protocol]") {
  field_names f;
  CHECK(compact(to_json(lease_update(f, "h-1-0", 0x1234, t0).get())) ==
        R"({"$set":{"_dibs.by":"h-1-0","_dibs.token":{"$numberLong":"4660"},"_dibs.until":{"$date":{"$numberLong":"1700000000000"}}},)"
        R"("$inc":{"_dibs.attempts":{"$numberInt":"1"}}})");
  CHECK(compact(to_json(claim_projection(f).get())) ==
        R"({"_id":{"$numberInt":"1"},"originatingIp":{"$numberInt":"1"},"_dibs.attempts":{"$numberInt":"1"}})");
}

TEST_CASE("a completion is fenced by id, by, token and a live lease, and leaves the seed's shape", "[mongo][protocol]") {
  field_names f;
  const auto id = oid_value("65a1b2c3d4e5f60718293a4b");
  CHECK(compact(to_json(completion_filter(f, id, "w", 7, t0).get())) ==
        R"({"_id":{"$oid":"65a1b2c3d4e5f60718293a4b"},"_dibs.by":"w","_dibs.token":{"$numberLong":"7"},)"
        R"("_dibs.until":{"$gte":{"$date":{"$numberLong":"1700000000000"}}}})");
  auto result = from_json(R"({"city":"Paris"})");
  CHECK(compact(to_json(completion_update(f, result.get()).get())) ==
        R"({"$set":{"location":{"city":"Paris"}},"$unset":{"_dibs":""}})");
}

TEST_CASE("release, renewal and failure updates", "[mongo][protocol]") {
  field_names f;
  CHECK(compact(to_json(release_update(f, true, t0, "shutdown").get())) ==
        R"({"$set":{"_dibs.until":{"$date":{"$numberLong":"0"}},"_dibs.lastError":"shutdown"},"$unset":{"_dibs.by":"","_dibs.token":""}})");
  CHECK(compact(to_json(release_update(f, false, t0, "").get())) ==
        R"({"$set":{"_dibs.until":{"$date":{"$numberLong":"1700000000000"}},"_dibs.token":{"$numberLong":"0"}}})");
  CHECK(compact(to_json(renew_update(f, t0).get())) == R"({"$set":{"_dibs.until":{"$date":{"$numberLong":"1700000000000"}}}})");
  CHECK_THAT(compact(to_json(failure_update(f, "HTTP 404", 404, 3, t0).get())),
             Catch::Contains(R"("_dibs.failed":{"reason":"HTTP404","httpStatus":{"$numberInt":"404"},"attempts":{"$numberInt":"3"})") &&
                 Catch::Contains(R"("$unset":{"_dibs.by":"","_dibs.token":"","_dibs.until":""})"));
}

TEST_CASE("the claim index is partial on a null target, and the lock collection has TTL and by indexes", "[mongo][protocol]") {
  field_names f;
  CHECK(compact(to_json(claim_index_command("message", f).get())) ==
        R"({"createIndexes":"message","indexes":[{"key":{"_dibs.until":{"$numberInt":"1"}},"name":"dibs_claim__dibs_until",)"
        R"("partialFilterExpression":{"location":null}}]})");
  const auto lock = compact(to_json(lock_index_command("message.lock", 3600).get()));
  CHECK_THAT(lock, Catch::Contains(R"("key":{"ts":{"$numberInt":"1"}},"name":"dibs_lock_ttl","expireAfterSeconds":{"$numberLong":"3600"})"));
  CHECK_THAT(lock, Catch::Contains(R"("key":{"by":{"$numberInt":"1"}},"name":"dibs_lock_by")"));
}

TEST_CASE("document ids survive the trip through job ids", "[mongo][ids]") {
  for (const char* text : {"65a1b2c3d4e5f60718293a4b", "i32:7", "i64:-9000000000", "str:a b:c"}) {
    auto id = id_from_text(text);
    REQUIRE(id);
    CHECK(id_to_text(id->value()) == text);
  }
  bson_value_t d{};
  d.value_type = BSON_TYPE_DOUBLE;
  d.value.v_double = 2.5;
  const auto ext = id_to_text(d);
  CHECK(ext.rfind("ext:", 0) == 0);
  auto back = id_from_text(ext);
  REQUIRE(back);
  CHECK(back->value().value_type == BSON_TYPE_DOUBLE);
  CHECK_FALSE(id_from_text("nonsense"));
  CHECK_FALSE(id_from_text("i32:x"));
}

TEST_CASE("JSON answers become BSON with their types kept", "[mongo][json]") {
  simdjson::ondemand::parser parser;
  std::string json = R"({"i":42,"big":12345678901,"neg":-5,"d":1.5,"e":1e3,"s":"Zürich","t":true,"n":null,)"
                     R"("o":{"a":[1,"x",{"b":false}]},"u":18446744073709551615})";
  auto r = json_to_bson(parser, json);
  REQUIRE(r.error.empty());
  REQUIRE(r.doc);
  const auto out = compact(to_json(r.doc.get()));
  CHECK_THAT(out, Catch::Contains(R"("i":{"$numberLong":"42"})"));
  CHECK_THAT(out, Catch::Contains(R"("big":{"$numberLong":"12345678901"})"));
  CHECK_THAT(out, Catch::Contains(R"("neg":{"$numberLong":"-5"})"));
  CHECK_THAT(out, Catch::Contains(R"("d":{"$numberDouble":"1.5"})"));
  CHECK_THAT(out, Catch::Contains(R"("e":{"$numberDouble":"1000.0"})"));
  CHECK_THAT(out, Catch::Contains(R"("s":"Zürich")"));
  CHECK_THAT(out, Catch::Contains(R"("o":{"a":[{"$numberLong":"1"},"x",{"b":false}]})"));
  CHECK_THAT(out, Catch::Contains(R"("u":{"$numberDouble":"18446744073709551616.0"})"));  // above int64: double
}

TEST_CASE("JSON that BSON can't hold, or that is not a clean object, is refused with the reason", "[mongo][json]") {
  simdjson::ondemand::parser parser;
  auto err = [&](std::string json, std::size_t depth = 64) { return json_to_bson(parser, json, depth).error; };
  CHECK_THAT(err(R"({"a":"x\u0000y"})"), Catch::Contains("NUL"));
  CHECK_THAT(err(R"({"a\u0000":1})"), Catch::Contains("NUL"));
  CHECK_THAT(err("{\"a\":\"\xc3\x28\"}"), Catch::Contains("invalid JSON"));  // invalid UTF-8
  CHECK(err("[1,2]") == "the JSON is not an object");
  CHECK_THAT(err(R"({"a":1} x)"), Catch::Contains("invalid JSON"));
  CHECK_THAT(err(R"({"a":{"b":{"c":{}}}})", 2), Catch::Contains("nested deeper than 2"));
  CHECK_THAT(err(R"({"a":)"), Catch::Contains("invalid JSON"));
}

TEST_CASE("connection strings are printed without their password", "[uri]") {
  CHECK(redact_uri("mongodb://user:secret@host:27017/db?x=1") == "mongodb://user:***@host:27017/db?x=1");
  CHECK(redact_uri("mongodb://host/db") == "mongodb://host/db");
  CHECK(redact_uri("mongodb://user@host/db") == "mongodb://user@host/db");
  CHECK(redact_uri("mysql://u:p%40ss@h:3306/db?table=jobs") == "mysql://u:***@h:3306/db?table=jobs");
  // Found by fuzzing: an unencoded '/' in the password once cut the authority short.
  CHECK(redact_uri("mysql://app:pa/ss@h:3306/db") == "mysql://app:***@h:3306/db");
  CHECK(redact_uri("mysql://app:s3cr3mysql://app:s3cr3t%40pw@12t%40pw@17.0.027.0.0").find("s3cr3") == std::string::npos);
  CHECK(redact_uri("not a uri") == "not a uri");
}

TEST_CASE("lock-collection documents: token, renewal, release, open guard, leased counts", "[mongo][protocol]") {
  field_names f;
  CHECK(compact(to_json(lock_token_filter(9).get())) == R"({"token":{"$numberLong":"9"}})");
  CHECK(compact(to_json(lock_renew_update(t0, t0 + std::chrono::seconds(60)).get())) ==
        R"({"$set":{"until":{"$date":{"$numberLong":"1700000060000"}},"ts":{"$date":{"$numberLong":"1700000000000"}}}})");
  CHECK(compact(to_json(lock_release_update(true, t0, t0, "shutdown").get())) ==
        R"({"$set":{"until":{"$date":{"$numberLong":"0"}},"ts":{"$date":{"$numberLong":"1700000000000"}},"lastError":"shutdown"},)"
        R"("$unset":{"by":"","token":""}})");
  CHECK(compact(to_json(lock_release_update(false, t0 + std::chrono::seconds(5), t0, "").get())) ==
        R"({"$set":{"until":{"$date":{"$numberLong":"1700000005000"}},"token":{"$numberLong":"0"},"ts":{"$date":{"$numberLong":"1700000000000"}}}})");
  const auto id = oid_value("65a1b2c3d4e5f60718293a4b");
  // Only an open document: no failure recorded, the lease field dibs's (issue 46).
  CHECK(compact(to_json(open_document_filter(f, id).get())) ==
        R"({"_id":{"$oid":"65a1b2c3d4e5f60718293a4b"},"location":null,"_dibs.failed":{"$exists":false},)"
        R"("$or":[{"_dibs":{"$exists":false}},{"_dibs":{"$type":"object"}}]})");
  CHECK(compact(to_json(lock_leased_filter(t0, false).get())) ==
        R"({"token":{"$exists":true},"until":{"$lt":{"$date":{"$numberLong":"1700000000000"}}}})");
  CHECK(compact(to_json(id_in_filter({id}).get())) == R"({"_id":{"$in":[{"$oid":"65a1b2c3d4e5f60718293a4b"}]}})");
}

TEST_CASE("a lease field dibs did not write (false, a string, null...) is never claimed and counts as failed",
          "[mongo][protocol][foreign-lease]") {
  field_names f;
  const std::string ours = R"({"$or":[{"_dibs":{"$exists":false}},{"_dibs":{"$type":"object"}}]})";
  const std::string foreign = R"("_dibs":{"$exists":true,"$not":{"$type":"object"}})";
  CHECK_THAT(compact(to_json(claimable_filter(f, {t0, t0}).get())), Catch::Contains(ours));
  CHECK(compact(to_json(unlocked_candidate_filter(f).get())) ==
        R"({"location":null,"_dibs.failed":{"$exists":false},)" + ours.substr(1));
  CHECK(compact(to_json(failed_filter(f).get())) ==
        R"({"location":null,"$or":[{"_dibs.failed":{"$exists":true}},{)" + foreign + "}]}");
  CHECK(compact(to_json(foreign_lease_filter(f).get())) == R"({"location":null,)" + foreign + "}");
  field_names g{"ip", "geo", "lease"};
  CHECK_THAT(compact(to_json(foreign_lease_filter(g).get())), Catch::Contains(R"("lease":{"$exists":true)"));
}
