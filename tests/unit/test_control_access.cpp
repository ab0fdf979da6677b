// Who may use the HTTP controls, from the headers alone (control_access.hpp), and what a control
// request may look like on the wire (control_framing.hpp).
#include "adapters/control/control_access.hpp"
#include "adapters/control/control_framing.hpp"

#include <catch2/catch.hpp>

using namespace dibs::http;

TEST_CASE("the controls' Host check: loopback names with the server's port, added names with any", "[controls][unit]") {
  control_access a{9100, "127.0.0.1", {"Dibs.Example.org"}};
  CHECK(a.host_allowed("127.0.0.1:9100"));
  CHECK(a.host_allowed("localhost:9100"));
  CHECK(a.host_allowed("LOCALHOST"));
  CHECK(a.host_allowed("[::1]:9100"));
  CHECK(a.host_allowed("dibs.example.org"));
  CHECK(a.host_allowed("dibs.example.org:443"));
  CHECK_FALSE(a.host_allowed("127.0.0.1:9101"));
  CHECK_FALSE(a.host_allowed("evil.example:9100"));
  CHECK_FALSE(a.host_allowed("localhost.evil.example:9100"));
  CHECK_FALSE(a.host_allowed(""));
  CHECK_FALSE(a.host_allowed("127.0.0.1:"));
  CHECK_FALSE(a.host_allowed("127.0.0.1:9100x"));
  CHECK_FALSE(a.host_allowed("::1:9100"));
  // Listening on one other address: that one too; on every address: only what is named.
  CHECK(control_access{9100, "10.0.0.5", {}}.host_allowed("10.0.0.5:9100"));
  CHECK(control_access{9100, "::1", {}}.host_allowed("[::1]:9100"));
  CHECK_FALSE(control_access{9100, "0.0.0.0", {}}.host_allowed("0.0.0.0:9100"));
}

TEST_CASE("the controls' Origin check", "[controls][unit]") {
  control_access a{9100, "127.0.0.1", {"dibs.example.org"}};
  CHECK(a.origin_allowed("http://127.0.0.1:9100"));
  CHECK(a.origin_allowed("http://localhost:9100"));
  CHECK(a.origin_allowed("https://dibs.example.org"));
  CHECK_FALSE(a.origin_allowed("http://127.0.0.1:8080"));
  CHECK_FALSE(a.origin_allowed("http://127.0.0.1"));  // port 80
  CHECK_FALSE(a.origin_allowed("https://127.0.0.1:9100"));
  CHECK_FALSE(a.origin_allowed("http://evil.example"));
  CHECK_FALSE(a.origin_allowed("null"));
}

TEST_CASE("listening on every address: IP addresses with the server's port are its own, names are not", "[controls][unit]") {
  control_access any{9100, "0.0.0.0", {}};
  CHECK(any.host_allowed("10.1.2.3:9100"));  // a scraper that knows the pod by its IP
  CHECK(any.host_allowed("127.0.0.1:9100"));
  CHECK(control_access{9100, "::", {}}.host_allowed("[fd00::5]:9100"));
  CHECK_FALSE(any.host_allowed("10.1.2.3:9101"));
  CHECK_FALSE(any.host_allowed("pod.example:9100"));  // a name could be a rebinding attack
  CHECK_FALSE(any.host_allowed("1.2.3:9100"));
  CHECK_FALSE(any.host_allowed("1.2.3.4.5:9100"));
  CHECK_FALSE(any.host_allowed("1.2.3.4444:9100"));
  CHECK_FALSE(any.host_allowed("0.0.0.0:9100"));
}

namespace {
// A request as the checks see it.
control_request access_req(bool post, std::string_view host, std::optional<std::string_view> origin = std::nullopt,
                    std::optional<std::string_view> token = std::nullopt,
                    std::optional<std::string_view> authorization = std::nullopt, bool loopback = true) {
  return control_request{post, host, origin, token, authorization, loopback};
}
const std::string access_key = "k3y-0f-the-c0ntrols-0123";
const std::string bearer = "Bearer " + access_key;
}  // namespace

TEST_CASE("a POST only from this host, a GET from anywhere the Host check allows", "[controls][unit]") {
  control_access a{9100, "0.0.0.0", {}};
  a.key = access_key;
  const std::string host = "10.1.2.3:9100";
  CHECK_FALSE(check_control_request(a, access_req(false, host, std::nullopt, std::nullopt, std::nullopt, false)));
  const auto refused = check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, bearer, false));
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK_THAT(refused->reason, Catch::Contains("this host only"));
  CHECK_FALSE(check_control_request(a, access_req(true, "127.0.0.1:9100", std::nullopt, std::nullopt, bearer, true)));
  a.posts_from_loopback_only = false;  // an embedding program's choice
  CHECK_FALSE(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, bearer, false)));
  CHECK(check_control_request(a, access_req(false, "evil.example"))->status == 421);
  CHECK(check_control_request(a, access_req(true, "evil.example", "http://evil.example", std::nullopt, bearer))->status == 421);
}

TEST_CASE("a program's POST needs the controls' key (401 without it, or with another), X-Dibs-Control no longer suffices",
          "[controls][unit]") {
  control_access a{9100, "127.0.0.1", {}};
  a.token = "0123456789abcdef0123456789abcdef";
  const std::string host = "127.0.0.1:9100";
  // No key given to the controls: no program's POST at all, whatever it sends.
  auto no = check_control_request(a, access_req(true, host));
  REQUIRE(no);
  CHECK(no->status == 401);
  // The library names the setting; the dibs program says its flag (test_cli_control_key.cpp).
  CHECK_THAT(no->reason, Catch::Contains("(dibs: control_key_file FILE or DIBS_CONTROL_KEY"));
  CHECK(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, bearer))->status == 401);
  a.key = access_key;
  CHECK_FALSE(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, bearer)));
  CHECK_FALSE(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, "bearer " + access_key)));  // any case
  CHECK(check_control_request(a, access_req(true, host))->status == 401);
  CHECK(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, "Bearer " + access_key + "x"))->status == 401);
  CHECK(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, "Bearer "))->status == 401);
  CHECK(check_control_request(a, access_req(true, host, std::nullopt, std::nullopt, access_key))->status == 401);  // no scheme
  // The page's token is the page's: a program without an Origin can't use it instead of the key.
  CHECK(check_control_request(a, access_req(true, host, std::nullopt, a.token))->status == 403);
  // A key never makes another site's page welcome.
  CHECK(check_control_request(a, access_req(true, host, "http://evil.example", std::nullopt, bearer))->status == 403);
  // GETs need neither.
  CHECK_FALSE(check_control_request(a, access_req(false, host)));
}

TEST_CASE("the dashboard's token: a browser's POST needs it, with the page's own Origin", "[controls][unit]") {
  control_access a{9100, "127.0.0.1", {"dibs.example.org"}};
  a.token = "0123456789abcdef0123456789abcdef";
  const std::string host = "127.0.0.1:9100", own = "http://127.0.0.1:9100";
  // The page's POST: its own Origin and the token (also through a proxy that passes on its own
  // Basic credentials in Authorization).
  CHECK_FALSE(check_control_request(a, access_req(true, host, own, a.token)));
  CHECK_FALSE(check_control_request(a, access_req(true, host, "https://dibs.example.org", a.token, "Basic YWxpY2U6cHc=")));
  // From a browser (an Origin), nothing else is enough ...
  auto no = check_control_request(a, access_req(true, host, own));
  REQUIRE(no);
  CHECK(no->status == 403);
  CHECK_THAT(no->reason, Catch::Contains("X-Dibs-Token"));
  // ... nor is a token of another process (a tab left open from an earlier run).
  no = check_control_request(a, access_req(true, host, own, "ffffffffffffffffffffffffffffffff"));
  REQUIRE(no);
  CHECK_THAT(no->reason, Catch::Contains("reload the page"));
  CHECK(check_control_request(a, access_req(true, host, own, "0123"))->status == 403);
  // Another site's page, even holding the token, is refused by its Origin.
  CHECK(check_control_request(a, access_req(true, host, "http://evil.example", a.token))->status == 403);
  // A page served to another host carries no token (a peer that may not POST).
  CHECK(a.page_gets_token(true));
  CHECK_FALSE(a.page_gets_token(false));
  a.posts_from_loopback_only = false;
  CHECK(a.page_gets_token(false));
}

TEST_CASE("a control key is long enough and fits in a header", "[controls][unit]") {
  CHECK(control_key_problem(access_key).empty());
  CHECK_THAT(control_key_problem("short"), Catch::Contains("16"));
  CHECK_FALSE(control_key_problem("a key with spaces in it").empty());
  CHECK_FALSE(control_key_problem("0123456789abcdef\n").empty());
  CHECK_FALSE(control_key_problem("0123456789abcdef\xc3\xa9").empty());
}

TEST_CASE("the controls' framing: Transfer-Encoding refused, a checked header given twice refused", "[controls][unit]") {
  namespace bhttp = boost::beast::http;
  bhttp::fields ok;
  ok.insert("Host", "127.0.0.1:9100");
  ok.insert("Content-Length", "2");
  CHECK_FALSE(check_framing(ok));
  bhttp::fields chunked = ok;
  chunked.insert("Transfer-Encoding", "chunked");
  CHECK(check_framing(chunked)->status == 411);
  for (const char* name : {"Host", "Origin", "Authorization", "X-Dibs-Token", "Content-Length"}) {
    bhttp::fields twice = ok;
    twice.insert(name, "a");
    twice.insert(name, "b");
    const auto no = check_framing(twice);
    INFO(name);
    REQUIRE(no);
    CHECK(no->status == 400);
    CHECK_THAT(no->reason, Catch::Contains(name));
  }
}

TEST_CASE("control tokens are 32 hex digits and differ from one server to the next", "[controls][unit]") {
  const auto t1 = make_control_token(), t2 = make_control_token();
  CHECK(t1.size() == 32);
  CHECK(t1.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(t1 != t2);
}
