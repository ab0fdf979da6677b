// A mysql:// URI naming several hosts (a Galera cluster's nodes) and what a worker does with
// them: which host a connection tries, when it moves on, and what a claim's lost race is.
#include <adapters/mysql/mysql_hosts.hpp>
#include <adapters/mysql/mysql_uri.hpp>
#include <adapters/mysql/server_errors.hpp>

#include <catch2/catch.hpp>

using namespace dibs::mysql;

TEST_CASE("mysql: a URI names several hosts as the mysql client writes them, the first one first", "[mysql][uri][cluster]") {
  const auto u = parse_mysql_uri("mysql://app@10.0.0.1:3307,10.0.0.2,db3.example:3309/shop?table=orders");
  REQUIRE(u.hosts.size() == 3);
  CHECK(u.hosts[0] == host_port{"10.0.0.1", 3307});
  CHECK(u.hosts[1] == host_port{"10.0.0.2", 3306});  // a host without a port: 3306
  CHECK(u.hosts[2] == host_port{"db3.example", 3309});
  CHECK(u.host == "10.0.0.1");
  CHECK(u.port == 3307);
  CHECK(u.table == "orders");
  const auto third = at_host(u, 2);
  CHECK(third.host == "db3.example");
  CHECK(third.port == 3309);
  CHECK(third.database == "shop");

  // One host reads as before.
  const auto one = parse_mysql_uri("mysql://app@127.0.0.1:3307/shop");
  REQUIRE(one.hosts.size() == 1);
  CHECK(one.hosts[0] == host_port{"127.0.0.1", 3307});
  CHECK(parse_mysql_uri("mysql://app@[::1]:3306/shop").hosts[0] == host_port{"[::1]", 3306});
}

TEST_CASE("mysql: a host list with an empty host or a bad port is refused, its secrets never shown", "[mysql][uri][cluster][secrets]") {
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app:S3cretPW@h1:3306,,h3/db"),
                    Catch::Contains("an empty host") && !Catch::Contains("S3cretPW"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app:S3cretPW@h1:3306,h2:x9/db"),
                    Catch::Contains("port is not a number") && !Catch::Contains("S3cretPW") && Catch::Contains("app:***@"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app:S3cretPW@h1,/db"), Catch::Contains("an empty host") && !Catch::Contains("S3cretPW"));
}

TEST_CASE("mysql: TLS is off by default only when every host of the list is on this machine", "[mysql][uri][cluster]") {
  CHECK(parse_mysql_uri("mysql://app@127.0.0.1:1,127.0.0.1:2/db").effective_ssl_mode() == ssl_mode::disabled);
  CHECK(parse_mysql_uri("mysql://app@127.0.0.1:1,db2.example:2/db").effective_ssl_mode() == ssl_mode::verify_identity);
  CHECK(parse_mysql_uri("mysql://app@db1.example:1,127.0.0.1:2/db").effective_ssl_mode() == ssl_mode::verify_identity);
}

TEST_CASE("mysql: a new connection tries the current host, then the others in the URI's order, each once", "[mysql][cluster]") {
  CHECK(connect_order(1, 0) == std::vector<std::size_t>{0});
  CHECK(connect_order(3, 0) == std::vector<std::size_t>{0, 1, 2});
  CHECK(connect_order(3, 1) == std::vector<std::size_t>{1, 2, 0});
  CHECK(connect_order(3, 2) == std::vector<std::size_t>{2, 0, 1});
  // After host 2 of 3 is lost, new connections start at host 3; after host 3, at host 1; with a
  // single host, at that host again (a restarted server is reconnected to, as before).
  CHECK(after_loss(3, 1) == 2);
  CHECK(after_loss(3, 2) == 0);
  CHECK(after_loss(1, 0) == 0);
}

TEST_CASE("mysql: a lost, refused or not-ready node sends a worker to another host, a refusal every host would give does not",
          "[mysql][cluster]") {
  // Galera's "WSREP has not yet prepared node for application use": a node out of the primary
  // component, or still joining.
  CHECK(classify(1047) == error_class::node_unready);
  const std::string wsrep = "WSREP has not yet prepared node for application use";
  for (unsigned code : {1047u, 2002u, 2003u, 2006u, 2013u, 1053u, 1927u}) CHECK(another_host_may_answer(code, wsrep));
  for (unsigned code : {2002u, 2003u, 2006u, 2013u, 1053u, 1927u}) CHECK(another_host_may_answer(code, ""));
  // 1047 is ER_UNKNOWN_COM_ERROR first: from a server that is no Galera node (or a proxy before
  // one) it is a command every host would refuse the same, not a node that is not ready.
  CHECK_FALSE(another_host_may_answer(1047, "Unknown command"));
  // A wrong password, an unknown database, a missing right, a deadlock, a refused row: the
  // same on every node of a cluster.
  for (unsigned code : {1045u, 1049u, 1142u, 1213u, 1406u, 9999u}) CHECK_FALSE(another_host_may_answer(code, wsrep));
}

TEST_CASE("mysql: a claim that fails certification (Galera's 1213) or times out on a lock is a claim conflict, nothing else is",
          "[mysql][cluster]") {
  CHECK(is_claim_conflict(1213));
  CHECK(is_claim_conflict(1205));
  for (unsigned code : {1047u, 2013u, 1142u, 1406u, 9999u}) CHECK_FALSE(is_claim_conflict(code));
}
