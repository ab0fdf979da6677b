// The pre-flight's decisions: does the sampled item have the template's field, and what does the
// one request's answer say about the API.
#include "apps/dibs/preflight_verdicts.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using dibs::cli::judge_probe;
using dibs::cli::missing_field_refusal;
using probe_kind = dibs::cli::probe_verdict::kind;
using dibs::cli::probe_answer;

namespace {
pending_sample sample(job_field::state st, std::vector<std::string> fields, std::string value = {}) {
  pending_sample s;
  s.id = "6523a1";
  s.source.name = "ip";
  s.source.st = st;
  s.source.value = std::move(value);
  s.fields = std::move(fields);
  return s;
}

http::response failed(boost::system::error_code ec, std::string stage) {
  http::response r;
  r.ec = ec;
  r.stage = std::move(stage);
  return r;
}

http::response answered(int status, std::string body = "{\"status\":\"success\"}") {
  http::response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}
const std::string nginx_404 = "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found"
                              "</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
}  // namespace

TEST_CASE("a field the item lacks is refused: which field, which item, what it has, the name meant", "[cli][preflight]") {
  const auto line = missing_field_refusal("ip", sample(job_field::state::missing, {"_id", "originatingIp", "location"}), "--url");
  CHECK_THAT(line, Catch::Contains("--url reads the field 'ip'") && Catch::Contains("pending item 6523a1") &&
                       Catch::Contains("it has: _id, originatingIp, location"));
  const auto typo = missing_field_refusal("originatingIP", sample(job_field::state::missing, {"_id", "originatingIp"}), "--url");
  CHECK_THAT(typo, Catch::EndsWith("did you mean 'originatingIp'?"));
}

TEST_CASE("a field that is there is no refusal, even NULL or not a string (that item's own problem)", "[cli][preflight]") {
  CHECK(missing_field_refusal("ip", sample(job_field::state::string, {"_id", "ip"}, "8.8.8.8"), "--url").empty());
  CHECK(missing_field_refusal("ip", sample(job_field::state::not_string, {"_id", "ip"}), "--url").empty());
  // An SQL column that exists, NULL in the sampled row: the column list has it.
  CHECK(missing_field_refusal("ip", sample(job_field::state::missing, {"id", "ip", "location"}), "--url").empty());
}

TEST_CASE("a long list of names is cut", "[cli][preflight]") {
  std::vector<std::string> many;
  for (int i = 0; i < 40; ++i) many.push_back("f" + std::to_string(i));
  const auto line = missing_field_refusal("ip", sample(job_field::state::missing, many), "--url");
  CHECK_THAT(line, Catch::Contains("f11, ...") && Catch::Contains("(40 in all)") && !Catch::Contains("f12,"));
}

TEST_CASE("no API there: refused, unresolvable, timed out are refused at once", "[cli][preflight]") {
  CHECK(judge_probe(failed(boost::asio::error::connection_refused, "connect"), 1, 3).what == probe_kind::refuse);
  CHECK(judge_probe(failed(boost::asio::error::host_not_found, "resolve nosuch.invalid"), 1, 3).what == probe_kind::refuse);
  CHECK(judge_probe(failed(boost::asio::error::host_not_found_try_again, "resolve api"), 1, 3).what == probe_kind::refuse);
  const auto t = judge_probe(failed(boost::beast::error::timeout, "read"), 1, 3);
  CHECK(t.what == probe_kind::refuse);
  CHECK_THAT(t.why, Catch::Contains("timed out"));
  CHECK_THAT(judge_probe(failed(boost::asio::error::connection_refused, "connect"), 1, 3).why,
             Catch::Contains("Connection refused"));
}

TEST_CASE("a 5xx is an answer: the run goes on with a warning, and one item's 500 refuses nothing", "[cli][preflight]") {
  for (int s : {500, 502, 503}) {
    INFO(s);
    const auto v = judge_probe(answered(s), 1, 3);
    CHECK(v.what == probe_kind::go);
    CHECK_THAT(v.why, Catch::Contains(std::to_string(s)) && Catch::Contains("the run goes on"));
  }
}

TEST_CASE("a broken exchange is tried again, then refused", "[cli][preflight]") {
  CHECK(judge_probe(failed(boost::asio::error::connection_reset, "read"), 1, 3).what == probe_kind::again);
  CHECK(judge_probe(failed(boost::asio::error::connection_reset, "read"), 3, 3).what == probe_kind::refuse);
}

TEST_CASE("any other HTTP answer proves the API is there", "[cli][preflight]") {
  for (int s : {200, 201, 408, 429}) {
    INFO(s);
    CHECK(judge_probe(answered(s), 1, 3).what == probe_kind::go);
  }
  // A body over --max-body came from an API all the same.
  CHECK(judge_probe(failed(boost::beast::http::error::body_limit, "read"), 1, 3).what == probe_kind::go);
  // A batch's answer is an array.
  CHECK(judge_probe(answered(200, "[{\"status\":\"success\"}]"), 1, 3, probe_answer::array).what == probe_kind::go);
}

TEST_CASE("a 2xx that is not the JSON the run expects is refused before any item is charged", "[cli][preflight]") {
  const auto html = judge_probe(answered(200, "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body>...</body></html>"), 1, 3);
  CHECK(html.what == probe_kind::refuse);
  CHECK_THAT(html.why, Catch::Contains("HTTP 200 OK with an HTML page (<title>Welcome to nginx!</title>) where the run expects a JSON "
                                       "object: every item would be charged and fail"));
  CHECK(judge_probe(answered(200, "OK"), 1, 3).what == probe_kind::refuse);
  CHECK(judge_probe(answered(204, ""), 1, 3).what == probe_kind::refuse);
  CHECK(judge_probe(answered(200, "[1,2]"), 1, 3).what == probe_kind::refuse);        // an array where an object is expected
  CHECK(judge_probe(answered(200, "{\"a\":1}"), 1, 3, probe_answer::array).what == probe_kind::refuse);  // and the other way round
  // A batch template's answer is either (OpenAI's list object, text-embeddings-inference's array), never a page.
  CHECK(judge_probe(answered(200, "{\"data\":[]}"), 1, 3, probe_answer::json).what == probe_kind::go);
  CHECK(judge_probe(answered(200, "[[0.1]]"), 1, 3, probe_answer::json).what == probe_kind::go);
  CHECK(judge_probe(answered(200, "OK"), 1, 3, probe_answer::json).what == probe_kind::refuse);
}

TEST_CASE("a 404 is a not-found, the API's own (JSON) or a page that is not the API's", "[cli][preflight]") {
  for (int s : {404, 405, 410}) {
    INFO(s);
    const auto page = judge_probe(answered(s, nginx_404), 1, 3);
    CHECK(page.what == probe_kind::not_found_page);
    CHECK_THAT(page.why, Catch::Contains("with an HTML page (<title>404 Not Found</title>), not the API's answer"));
    CHECK(judge_probe(answered(s, ""), 1, 3).what == probe_kind::not_found_page);
    const auto own = judge_probe(answered(s, "{\"error\":\"no location known for this address\"}"), 1, 3);
    CHECK(own.what == probe_kind::not_found);
  }
  CHECK(judge_probe(answered(404, "{\"error\":\"no location known for this address\"}"), 1, 3).why ==
        "HTTP 404 Not Found: no location known for this address");
}

TEST_CASE("a refused client or a redirect is refused: every item would fail the same way", "[cli][preflight]") {
  CHECK(judge_probe(answered(401), 1, 3).what == probe_kind::refuse);
  CHECK(judge_probe(answered(403), 1, 3).what == probe_kind::refuse);
  auto moved = answered(301, "");
  moved.headers.emplace_back("Location", "https://api.example/json/1.2.3.4");
  const auto v = judge_probe(moved, 1, 3);
  CHECK(v.what == probe_kind::refuse);
  CHECK_THAT(v.why, Catch::Contains("to https://api.example/json/1.2.3.4"));
}

TEST_CASE("the pre-flight judges the API over a few items, not one", "[cli][preflight]") {
  using dibs::cli::ask_another;
  using dibs::cli::judge_probes;
  const auto go = judge_probe(answered(200), 1, 3);
  const auto own_404 = judge_probe(answered(404, "{\"error\":\"no location known for this address\"}"), 1, 3);
  const auto page_404 = judge_probe(answered(404, nginx_404), 1, 3);
  const auto html_200 = judge_probe(answered(200, nginx_404), 1, 3);
  // A first answer decides; a "not found" asks another item.
  CHECK_FALSE(ask_another({go}));
  CHECK(ask_another({own_404}));
  CHECK(ask_another({own_404, page_404}));
  CHECK_FALSE(ask_another({own_404, go}));
  // One item answered among "not found"s: the path is right; a legitimate 404 refuses nothing.
  CHECK_FALSE(judge_probes({own_404, go}).refuse);
  CHECK_FALSE(judge_probes({page_404, page_404, go}).refuse);
  // Every pending item "not found": an item already done decides.
  const auto said = judge_probes({own_404}, go);
  CHECK_FALSE(said.refuse);
  CHECK_THAT(said.why, Catch::Contains("HTTP 404 Not Found: no location known for this address for the pending item asked, and an "
                                       "item already done was answered: the path is right"));
  const auto wrong = judge_probes({page_404}, page_404);
  CHECK(wrong.refuse);
  CHECK_THAT(wrong.why, Catch::EndsWith("and for an item already done: almost certainly a wrong URL path"));
  // None done: every pending item asked "not found" (a JSON 404 too: a wrong route of a JSON API).
  const auto none_done = judge_probes({own_404, own_404, own_404});
  CHECK(none_done.refuse);
  CHECK_THAT(none_done.why, Catch::Contains("for each of the 3 pending items asked (no item is done yet to ask instead): "
                                            "almost certainly a wrong URL path"));
  // A 400 (422, 413...) is the request as built, or that item's: another is asked; rejected for
  // every item asked, the run is refused with the API's words (before, a body the API rejects
  // for its first item went out for all 200 rows, each failed).
  const auto bad_400 = judge_probe(answered(400, "{\"error\":\"expected an object, but got list\"}"), 1, 3);
  CHECK(bad_400.what == probe_kind::rejected);
  CHECK(judge_probe(answered(422), 1, 3).what == probe_kind::rejected);
  CHECK(ask_another({bad_400}));
  const auto rejected = judge_probes({bad_400, bad_400, bad_400});
  CHECK(rejected.refuse);
  CHECK_THAT(rejected.why, Catch::StartsWith("HTTP 400 Bad Request: expected an object, but got list for each of the 3 "
                                             "pending items asked: the API rejects the request as the run builds it"));
  CHECK_FALSE(judge_probes({bad_400, go}).refuse);        // another item answered: that one's own
  CHECK_FALSE(judge_probes({bad_400}, go).refuse);        // an item already done was answered
  // An HTML 200 refuses whatever else was seen.
  CHECK(judge_probes({html_200}).refuse);
  CHECK(judge_probes({own_404}, html_200).refuse);
}

TEST_CASE("an account out of credit refuses the run at the pre-flight, with the API's words", "[cli][preflight]") {
  dibs::http::response r;
  r.status = 429;
  r.body = R"({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}})";
  const auto v = dibs::cli::judge_probe(r, 1, 3);
  CHECK(v.what == dibs::cli::probe_verdict::kind::refuse);
  CHECK_THAT(v.why, Catch::Contains("insufficient_quota") && Catch::Contains("You exceeded your current quota"));
  r.body = R"({"error": {"type": "tokens", "code": "rate_limit_exceeded"}})";  // a pace, not the account
  CHECK(dibs::cli::judge_probe(r, 1, 3).what != dibs::cli::probe_verdict::kind::refuse);
}
