#include <dibs/http/url_template.hpp>

#include <catch2/catch.hpp>

using namespace dibs;
using dibs::http::url_template;

namespace {
job with_field(const std::string& name, const std::string& value) {
  job j;
  j.fields.push_back(job_field{name, job_field::state::string, value, {}});
  return j;
}
}  // namespace

TEST_CASE("URL templates parse host, port and placeholders", "[url]") {
  auto t = url_template::parse("http://127.0.0.1:8080/json/{originatingIp}?fields=status,city");
  CHECK(t.host() == "127.0.0.1");
  CHECK(t.port() == 8080);
  REQUIRE(t.fields().size() == 1);
  CHECK(t.fields()[0] == "originatingIp");
  CHECK(t.expand(with_field("originatingIp", "8.8.8.8")).target == "/json/8.8.8.8?fields=status,city");

  auto d = url_template::parse("http://example.test");
  CHECK(d.port() == 80);
  CHECK(d.expand(job{}).target == "/");
  CHECK(url_template::parse("http://[::1]:9/x").host() == "::1");
  CHECK_FALSE(d.origin().tls);

  auto s = url_template::parse("HTTPS://api.example.test/batch?fields=query");
  CHECK(s.port() == 443);
  CHECK(s.origin().tls);
  CHECK(s.origin().host == "api.example.test");
}

TEST_CASE("URL template values are percent-encoded so they cannot escape their segment", "[url]") {
  auto t = url_template::parse("http://h/json/{ip}");
  CHECK(t.expand(with_field("ip", "a/b?c=d&e#f g")).target == "/json/a%2Fb%3Fc%3Dd%26e%23f%20g");
  CHECK(t.expand(with_field("ip", "2001:db8::1")).target == "/json/2001%3Adb8%3A%3A1");
  CHECK(t.expand(with_field("ip", "\xc3\xa9")).target == "/json/%C3%A9");
  CHECK(http::percent_encode("AZaz09-._~") == "AZaz09-._~");
}

TEST_CASE("URL template expansion names the missing or odd field", "[url]") {
  auto t = url_template::parse("http://h/json/{ip}");
  CHECK(t.expand(job{}).error == "source field 'ip' is missing");
  job odd;
  odd.fields.push_back(job_field{"ip", job_field::state::not_string, {}, "int32"});
  CHECK(t.expand(odd).error == "source field 'ip' is not a string (it is int32)");
  CHECK(t.expand(with_field("ip", "")).error == "source field 'ip' is an empty string");
}

TEST_CASE("bad URL templates are refused with the reason", "[url]") {
  auto refused = [](const std::string& text, const std::string& why) {
    try {
      url_template::parse(text);
      FAIL("accepted " << text);
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(why));
    }
  };
  refused("localhost:8080/json/{ip}", "expected http(s)://");
  refused("ftp://h/x", "unsupported scheme");
  refused("ftp://h/x", "unsupported scheme");
  refused("http://{host}/x", "may not stand in the host");
  refused("http://h:99999/x", "not a number from 1 to 65535");
  refused("http://h:0/x", "not a number from 1 to 65535");
  refused("http:///x", "no host");
  refused("http://h/json/{ip", "unclosed '{'");
  refused("http://h/json/ip}", "'}' without '{'");
  refused("http://h/json/{}", "empty {} placeholder");
  refused("http://h/a b", "percent-encoded");
  refused("http://user:pw@h/x", "user info");
}

TEST_CASE("a value that would be a '.' or '..' path segment is refused, never sent", "[url]") {
  auto t = url_template::parse("http://h/api/v1/lookup/{ip}?key=SECRET");
  for (const std::string v : {"..", "."}) {
    auto e = t.expand(with_field("ip", v));
    CHECK(e.target.empty());
    CHECK(e.error == "source field 'ip' makes the path segment '" + v +
                         "', which a proxy or server would resolve to another path");
  }
  // Dots inside a segment, or more of them, are no dot segment; slashes are encoded anyway.
  CHECK(t.expand(with_field("ip", "...")).target == "/api/v1/lookup/...?key=SECRET");
  CHECK(t.expand(with_field("ip", "1.2.3.4")).target == "/api/v1/lookup/1.2.3.4?key=SECRET");
  CHECK(t.expand(with_field("ip", "../x")).target == "/api/v1/lookup/..%2Fx?key=SECRET");
  // Two fields that make one segment together, and a dot segment at the end of the path.
  auto two = url_template::parse("http://h/a/{x}{y}/b");
  job j = with_field("x", ".");
  j.fields.push_back(job_field{"y", job_field::state::string, ".", {}});
  CHECK_FALSE(two.expand(j).error.empty());
  CHECK_FALSE(url_template::parse("http://h/a/{x}").expand(with_field("x", "..")).error.empty());
  // In the query, a dot is only data.
  CHECK(url_template::parse("http://h/a?q={x}").expand(with_field("x", "..")).target == "/a?q=..");
  // The template's own path may not have one either.
  CHECK_THROWS_WITH(url_template::parse("http://h/a/../{x}"), Catch::Contains("'.' or '..' segment"));
  CHECK_THROWS_WITH(url_template::parse("http://h/./{x}"), Catch::Contains("'.' or '..' segment"));
}

TEST_CASE("an IPv6 literal with a port parses, and its origin is the bare address", "[url]") {
  auto t = url_template::parse("http://[::1]:18087/json/{ip}");
  CHECK(t.host() == "::1");
  CHECK(t.port() == 18087);
  CHECK(t.origin().host == "::1");
  CHECK(t.expand(with_field("ip", "8.8.8.8")).target == "/json/8.8.8.8");
  CHECK(url_template::parse("https://[fd00::2]/x").port() == 443);
  CHECK_THROWS(url_template::parse("http://[::1/x"));
  CHECK_THROWS(url_template::parse("http://[::1]x:80/x"));
}

TEST_CASE("unit: a source value longer than the bound fails its item, never sent", "[url][limits]") {
  auto t = url_template::parse("http://h/json/{ip}");
  CHECK(t.max_value_bytes() == http::default_max_value_bytes);
  CHECK(t.expand(with_field("ip", std::string(2048, '1'))).error.empty());
  const auto e = t.expand(with_field("ip", std::string(10 << 20, '1')));  // 10 MB: once a 10 MB GET
  CHECK(e.error == "source field 'ip' is 10485760 bytes long, more than the 2048 a value may have");
  t.set_max_value_bytes(16);
  CHECK_THAT(t.expand(with_field("ip", std::string(17, '1'))).error, Catch::Contains("more than the 16"));
  CHECK(t.expand(with_field("ip", std::string(16, '1'))).error.empty());
}

TEST_CASE("secrets: a bad --url is told with every query value masked", "[url][secrets]") {
  try {
    url_template::parse("http://h/json/{ip?auth=S3cretA&appid=S3cretB", "--url");
    FAIL("accepted");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("bad --url 'http://h/json/{ip?auth=***&appid=***'"));
    CHECK(what.find("S3cret") == std::string::npos);
  }
}
