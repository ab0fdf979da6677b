// Who may use the HTTP controls, from the headers alone (control_access.hpp).
#include <adapters/http/control_access.hpp>

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

TEST_CASE("the controls' Origin check and the header every POST needs", "[controls][unit]") {
  control_access a{9100, "127.0.0.1", {"dibs.example.org"}};
  CHECK(a.origin_allowed("http://127.0.0.1:9100"));
  CHECK(a.origin_allowed("http://localhost:9100"));
  CHECK(a.origin_allowed("https://dibs.example.org"));
  CHECK_FALSE(a.origin_allowed("http://127.0.0.1:8080"));
  CHECK_FALSE(a.origin_allowed("http://127.0.0.1"));  // port 80
  CHECK_FALSE(a.origin_allowed("https://127.0.0.1:9100"));
  CHECK_FALSE(a.origin_allowed("http://evil.example"));
  CHECK_FALSE(a.origin_allowed("null"));
  const std::string host = "127.0.0.1:9100";
  CHECK_FALSE(check_control_request(a, false, host, std::nullopt, std::nullopt));
  CHECK_FALSE(check_control_request(a, true, host, std::nullopt, "1"));
  CHECK_FALSE(check_control_request(a, true, host, "http://127.0.0.1:9100", "1"));
  CHECK(check_control_request(a, true, host, std::nullopt, std::nullopt)->status == 403);
  CHECK(check_control_request(a, true, host, "http://evil.example", "1")->status == 403);
  CHECK(check_control_request(a, false, "evil.example", std::nullopt, std::nullopt)->status == 421);
  CHECK(check_control_request(a, true, "evil.example", "http://evil.example", "1")->status == 421);
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

TEST_CASE("POST /pause and /resume only from this host and GET from anywhere the Host check allows", "[controls][unit]") {
  control_access a{9100, "0.0.0.0", {}};
  const std::string host = "10.1.2.3:9100";
  CHECK_FALSE(check_control_request(a, false, host, std::nullopt, std::nullopt, /*peer_is_loopback=*/false));
  const auto refused = check_control_request(a, true, host, std::nullopt, "1", /*peer_is_loopback=*/false);
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK_THAT(refused->reason, Catch::Contains("this host only"));
  CHECK_FALSE(check_control_request(a, true, "127.0.0.1:9100", std::nullopt, "1", /*peer_is_loopback=*/true));
  a.posts_from_loopback_only = false;  // an embedding program's choice
  CHECK_FALSE(check_control_request(a, true, host, std::nullopt, "1", /*peer_is_loopback=*/false));
}

TEST_CASE("the dashboard's token: a browser's POST needs it, a program's may send X-Dibs-Control instead", "[controls][unit]") {
  control_access a{9100, "127.0.0.1", {}};
  a.token = "0123456789abcdef0123456789abcdef";
  const std::string host = "127.0.0.1:9100", own = "http://127.0.0.1:9100";
  // The page's POST: its own Origin and the token.
  CHECK_FALSE(check_control_request(a, true, host, own, std::nullopt, true, a.token));
  // From a browser (an Origin), X-Dibs-Control alone is no longer enough ...
  auto no = check_control_request(a, true, host, own, "1", true);
  REQUIRE(no);
  CHECK(no->status == 403);
  CHECK_THAT(no->reason, Catch::Contains("X-Dibs-Token"));
  // ... nor is a token of another process (a tab left open from an earlier run).
  no = check_control_request(a, true, host, own, "1", true, "ffffffffffffffffffffffffffffffff");
  REQUIRE(no);
  CHECK_THAT(no->reason, Catch::Contains("reload the page"));
  CHECK(check_control_request(a, true, host, own, std::nullopt, true, "0123")->status == 403);
  // Another site's page, even holding the token, is refused by its Origin.
  CHECK(check_control_request(a, true, host, "http://evil.example", std::nullopt, true, a.token)->status == 403);
  // curl and scripts (no Origin): X-Dibs-Control, or the token.
  CHECK_FALSE(check_control_request(a, true, host, std::nullopt, "1"));
  CHECK_FALSE(check_control_request(a, true, host, std::nullopt, std::nullopt, true, a.token));
  CHECK(check_control_request(a, true, host, std::nullopt, std::nullopt)->status == 403);
  CHECK(check_control_request(a, true, host, std::nullopt, "1", true, "wrong")->status == 403);
  // GETs need neither.
  CHECK_FALSE(check_control_request(a, false, host, own, std::nullopt));
}

TEST_CASE("control tokens are 32 hex digits and differ from one server to the next", "[controls][unit]") {
  const auto t1 = make_control_token(), t2 = make_control_token();
  CHECK(t1.size() == 32);
  CHECK(t1.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(t1 != t2);
}
