// A MongoDB bulk write's reply, read without a server: which statements the server refused (write
// errors), which matched, how many lost their lease; and the write concern chosen from the URI.
#include <adapters/mongo/primary_change.hpp>
#include <adapters/mongo/write_concern.hpp>
#include <adapters/mongo/write_errors.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using namespace dibs::mongo;

namespace {
// mongoc's merged reply of an unordered bulk of 4 updates where statement 2 broke a $jsonSchema
// validator (MongoDB 5+ sends errInfo with the failing rules), as mongoc_bulk_operation_execute
// fills it in.
const char* validator_reply = R"({"nInserted": 0, "nMatched": 2, "nModified": 2, "nRemoved": 0, "nUpserted": 0,
  "writeErrors": [{"index": 2, "code": 121, "errmsg": "Document failed validation",
    "errInfo": {"failingDocumentId": {"$oid": "65a1b2c3d4e5f60718293a4b"},
                "details": {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [
                  {"operatorName": "properties", "propertiesNotSatisfied": [{"propertyName": "location"}]}]}}}]})";

std::vector<lease_ref> refs_of(std::initializer_list<const char*> ids) {
  std::vector<lease_ref> out;
  for (auto id : ids) out.push_back(lease_ref{id, "w", 7});
  return out;
}
}  // namespace

TEST_CASE("a validator's write error refuses that statement: not applied, not a lost lease", "[mongo][write_errors]") {
  auto reply = from_json(validator_reply);
  auto v = judge_bulk_reply(reply.get(), false, "Document failed validation");
  REQUIRE_FALSE(v.batch_error);  // the other statements of the unordered bulk were applied
  CHECK(v.matched == 2);
  REQUIRE(v.refused.size() == 1);
  CHECK(v.refused[0].index == 2);
  CHECK(v.refused[0].code == 121);
  CHECK(v.refused[0].code_name == "DocumentValidationFailure");
  CHECK(v.refused_at(2) != nullptr);
  CHECK(v.refused_at(1) == nullptr);
  // 4 sent, 2 matched, 1 refused: exactly one lost its lease.
  CHECK(v.shortfall(4) == 1);

  refusals refused;
  const auto kept = split_refused(refs_of({"a", "b", "c", "d"}), v, refused);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].first == "c");
  CHECK_THAT(refused[0].second, Catch::StartsWith("MongoDB refused the write: code 121 (DocumentValidationFailure): "
                                                  "Document failed validation; details: ") &&
                                    Catch::Contains("schemaRulesNotSatisfied"));
  REQUIRE(kept.size() == 3);
  CHECK((kept[0].id + kept[1].id + kept[2].id) == "abd");
  const auto rest = without_refused(refs_of({"a", "b", "c", "d"}), refused);
  CHECK(rest.size() == 3);
}

TEST_CASE("a document grown past 16 MB is refused with the server's code, named when the server gives no name", "[mongo][write_errors]") {
  auto reply = from_json(R"({"nMatched": 0, "writeErrors": [{"index": 0, "code": 17419,
      "errmsg": "Resulting document after update is larger than 16777216"},
      {"index": 1, "code": 10334, "codeName": "BSONObjectTooLarge", "errmsg": "object to insert too large"}]})");
  auto v = judge_bulk_reply(reply.get(), false, "");
  REQUIRE(v.refused.size() == 2);
  CHECK(v.shortfall(2) == 0);
  CHECK(refusal_reason(v.refused[0]) ==
        "MongoDB refused the write: code 17419 (BSONObjectTooLarge): Resulting document after update is larger than 16777216");
  CHECK(refusal_reason(v.refused[1]) == "MongoDB refused the write: code 10334 (BSONObjectTooLarge): object to insert too large");
}

TEST_CASE("an answer over MongoDB's 16 MiB document limit is refused before the write", "[mongo][write_errors]") {
  CHECK_FALSE(oversized_answer(max_document_bytes));
  const auto why = oversized_answer(max_document_bytes + 1);
  REQUIRE(why);
  CHECK(*why == "the answer is 16777217 bytes as BSON, over MongoDB's document limit of 16777216 (BSONObjectTooLarge)");
}

TEST_CASE("a refusal's reason is kept short without splitting a character", "[mongo][write_errors]") {
  write_error e;
  e.code = 121;
  e.code_name = "DocumentValidationFailure";
  e.errmsg = "Document failed validation";
  e.details = std::string(2000, 'x') + "é";
  const auto r = refusal_reason(e, 100);
  CHECK(r.size() <= 100);
  CHECK_THAT(r, Catch::EndsWith("...") && Catch::StartsWith("MongoDB refused the write: code 121"));
  e.details = std::string(64, 'x') + "ééééééééééééé";
  const auto r2 = refusal_reason(e, 140);
  CHECK(r2.size() <= 140);
  // The cut lands on a character boundary: the text before "..." is valid UTF-8.
  const auto body = r2.substr(0, r2.size() - 3);
  CHECK((static_cast<unsigned char>(body.back()) & 0xC0) != 0xC0);
}

TEST_CASE("a bulk write with no write errors: all matched, or a failed write, or an unacknowledged write concern", "[mongo][write_errors]") {
  auto ok = from_json(R"({"nInserted": 0, "nMatched": 3, "nModified": 3, "nRemoved": 0, "nUpserted": 0, "writeErrors": []})");
  auto v = judge_bulk_reply(ok.get(), true, "");
  CHECK_FALSE(v.batch_error);
  CHECK(v.refused.empty());
  CHECK(v.shortfall(3) == 0);
  CHECK(v.shortfall(5) == 2);  // two fences did not hold: lost leases
  CHECK(v.upserted == 0);
  // Upserts (the answer cache's keeps) are counted apart from matches.
  CHECK(judge_bulk_reply(from_json(R"({"nMatched": 1, "nModified": 1, "nUpserted": 2, "writeErrors": []})").get(), true, "")
            .upserted == 2);

  auto empty = from_json(R"({"nMatched": 0, "writeErrors": []})");
  auto failed = judge_bulk_reply(empty.get(), false, "No suitable servers found");
  REQUIRE(failed.batch_error);
  CHECK(*failed.batch_error == "No suitable servers found");

  // Applied on the primary but not acknowledged by a majority: the batch is retried whole.
  auto wc = from_json(R"({"nMatched": 2, "writeErrors": [{"index": 0, "code": 121, "errmsg": "no"}],
      "writeConcernErrors": [{"code": 64, "errmsg": "waiting for replication timed out"}]})");
  auto w = judge_bulk_reply(wc.get(), false, "waiting for replication timed out");
  REQUIRE(w.batch_error);
}

TEST_CASE("the protocol writes with w:majority and journal unless the URI names a w, and w=0 is refused", "[mongo][write_concern]") {
  mongoc_init();
  auto wc_of = [](const char* text, std::string* said = nullptr) {
    mongoc_uri_t* uri = mongoc_uri_new(text);
    REQUIRE(uri);
    const auto choice = apply_write_concern(uri, "redacted");
    if (said) *said = choice.description + (choice.majority ? " [majority]" : "");
    auto* wc = mongoc_write_concern_copy(mongoc_uri_get_write_concern(uri));
    mongoc_uri_destroy(uri);
    return std::unique_ptr<mongoc_write_concern_t, void (*)(mongoc_write_concern_t*)>(wc, mongoc_write_concern_destroy);
  };
  std::string said;
  auto dflt = wc_of("mongodb://h1,h2/?replicaSet=rs0", &said);
  CHECK(mongoc_write_concern_get_wmajority(dflt.get()));
  CHECK(mongoc_write_concern_get_journal(dflt.get()));
  CHECK(said == "write concern w=majority, journal (the URI names no w) [majority]");

  auto timed = wc_of("mongodb://h/?wtimeoutMS=5000&journal=false", &said);
  CHECK(mongoc_write_concern_get_wmajority(timed.get()));
  CHECK_FALSE(mongoc_write_concern_get_journal(timed.get()));  // the URI's journal is honoured
  CHECK(mongoc_write_concern_get_wtimeout_int64(timed.get()) == 5000);

  auto one = wc_of("mongodb://h/?w=1", &said);
  CHECK_FALSE(mongoc_write_concern_get_wmajority(one.get()));
  CHECK(mongoc_write_concern_get_w(one.get()) == 1);
  CHECK(said == "write concern w=1 (from the URI)");  // not majority: warned about at start
  wc_of("mongodb://h/?w=majority", &said);
  CHECK(said == "write concern w=majority (from the URI) [majority]");

  mongoc_uri_t* zero = mongoc_uri_new("mongodb://u:secret@h/?w=0");
  REQUIRE(zero);
  CHECK_THROWS_WITH(apply_write_concern(zero, "mongodb://u:***@h/?w=0"),
                    Catch::Contains("w=0") && Catch::Contains("u:***@h") && !Catch::Contains("secret"));
  mongoc_uri_destroy(zero);
}

TEST_CASE("a write error of a stepping-down primary is no refusal: the batch is tried again, no item fails",
          "[mongo][write_errors][stepdown]") {
  // A primary stepping down interrupts a bulk write's statements with NotWritablePrimary (10107) or
  // InterruptedDueToReplStateChange (11602) write errors: nothing about the documents, and the
  // next primary takes the same statements. Read as refusals, each item would be failed.
  auto reply = from_json(R"({"nMatched": 1, "writeErrors": [
      {"index": 1, "code": 10107, "codeName": "NotWritablePrimary", "errmsg": "not primary"},
      {"index": 2, "code": 11602, "errmsg": "operation was interrupted"}]})");
  auto v = judge_bulk_reply(reply.get(), false, "not primary");
  CHECK(v.refused.empty());
  REQUIRE(v.batch_error);
  CHECK_THAT(*v.batch_error, Catch::Contains("not primary"));
  for (std::int64_t code : {10107, 13435, 13436, 189, 11600, 11602, 91}) CHECK(primary_changing(code));
  for (std::int64_t code : {121, 2, 11000, 17419, 0}) CHECK_FALSE(primary_changing(code));
  // The claim's read-back by token is read again through them, and through a lost link; not
  // through any other error.
  CHECK(read_back_again(13435, false));
  CHECK(read_back_again(0, true));
  CHECK_FALSE(read_back_again(2, false));
  // A validator's refusal beside them is still its statement's refusal.
  auto mixed = from_json(R"({"nMatched": 0, "writeErrors": [{"index": 0, "code": 121, "errmsg": "Document failed validation"},
      {"index": 1, "code": 10107, "errmsg": "not primary"}]})");
  auto m = judge_bulk_reply(mixed.get(), false, "not primary");
  REQUIRE(m.batch_error);
  CHECK(m.refused.size() == 1);
}
