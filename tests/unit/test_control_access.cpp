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
