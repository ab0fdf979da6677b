// mysql://app@localhost:3306/... goes where the mysql client goes (the Unix socket), and a failed
// connection says so, with what to write for TCP.
#include <adapters/mysql/mysql_endpoint.hpp>

#include <catch2/catch.hpp>

using namespace dibs::mysql;

TEST_CASE("mysql: localhost is the Unix socket, as for the mysql client, and 127.0.0.1 is TCP", "[mysql][uri][first-minutes]") {
  const auto local = parse_mysql_uri("mysql://app@localhost:3306/shop?table=orders");
  CHECK(uses_unix_socket(local));
  CHECK(endpoint_text(local, nullptr) == "the Unix socket /run/mysqld/mysqld.sock");
  CHECK(endpoint_text(local, "/tmp/my.sock") == "the Unix socket /tmp/my.sock");  // MYSQL_UNIX_PORT
  CHECK_THAT(endpoint_hint(local), Catch::Contains("for TCP write 127.0.0.1:3306") && Catch::Contains("socket=/path"));

  const auto tcp = parse_mysql_uri("mysql://app@127.0.0.1:3307/shop?table=orders");
  CHECK_FALSE(uses_unix_socket(tcp));
  CHECK(endpoint_text(tcp, "/tmp/my.sock") == "127.0.0.1:3307");
  CHECK(endpoint_hint(tcp).empty());

  const auto given = parse_mysql_uri("mysql://app@localhost/shop?table=orders&socket=/var/lib/mysql/mysql.sock");
  CHECK(endpoint_text(given, "/tmp/my.sock") == "the Unix socket /var/lib/mysql/mysql.sock");
  CHECK(endpoint_hint(given).empty());  // the user chose the socket
}
