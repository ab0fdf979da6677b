// Secrets in connection strings: the one redactor (every store's messages go through it), the
// driver's own messages about a URI, and the MySQL URI's TLS options.
#include <adapters/mysql/mysql_uri.hpp>

#include "engine/src/uri_redact.hpp"

#include <catch2/catch.hpp>

using namespace dibs;

TEST_CASE("query options that carry a secret are masked, whatever their case", "[uri][secrets]") {
  const std::string mongo =
      "mongodb://127.0.0.1:1/?tlsCertificateKeyFilePassword=S3cret&authMechanismProperties=AWS_SESSION_TOKEN:T0ken"
      "&serverSelectionTimeoutMS=200";
  CHECK(redact_uri(mongo) ==
        "mongodb://127.0.0.1:1/?tlsCertificateKeyFilePassword=***&authMechanismProperties=***&serverSelectionTimeoutMS=200");
  CHECK(redact_uri("mongodb://u:pw@h/db?sslClientCertificateKeyPassword=S3cret;appName=x") ==
        "mongodb://u:***@h/db?sslClientCertificateKeyPassword=***;appName=x");
  CHECK(redact_uri("mongodb://h/?MYTOKEN=a&apiSecret=b&x_KEY=c&credentials=d&w=1") ==
        "mongodb://h/?MYTOKEN=***&apiSecret=***&x_KEY=***&credentials=***&w=1");
  CHECK(redact_uri("mysql://app@h/db?password=S3cret&pwd=S3cret&table=t") == "mysql://app@h/db?password=***&pwd=***&table=t");
  // An '@' in the query does not hide the options before it.
  CHECK(redact_uri("mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN:T0ken&x=a@b").find("T0ken") == std::string::npos);
  CHECK(redact_uri("mongodb://h/?tlsCertificateKeyFilePassword=S3cret&x=a@b").find("S3cret") == std::string::npos);
}

TEST_CASE("a password without its '@' is masked too, host lists and ports stay readable", "[uri][secrets]") {
  CHECK(redact_uri("mysql://app:S3cretPW/db") == "mysql://app:***/db");
  CHECK(redact_uri("mysql://app:S3cretPW") == "mysql://app:***");
  CHECK(redact_uri("mongodb://h1:27017,h2:27017/db") == "mongodb://h1:27017,h2:27017/db");
  CHECK(redact_uri("mysql://[::1]:3306/db") == "mysql://[::1]:3306/db");
  CHECK(redact_uri("mysql://127.0.0.1:3306/db?table=t") == "mysql://127.0.0.1:3306/db?table=t");
  CHECK(redact_uri("mongodb://h1:27017,app:S3cret/db").find("S3cret") == std::string::npos);
}

TEST_CASE("a driver's message that quotes a piece of a secret is withheld", "[uri][secrets]") {
  const std::string uri = "mongodb://u:Hunter2Pass@h/?tlsCertificateKeyFilePassword=S3cretVal";
  // mongoc quotes a bad password, and truncates long messages (a piece is enough to withhold).
  CHECK(redact_driver_message("Password \"Hunter2Pass\" must not have unescaped chars.", uri).find("Hunter") == std::string::npos);
  CHECK(redact_driver_message("Password \"Hunt", uri).find("Hunt") == std::string::npos);
  CHECK(redact_driver_message("Deprecated option 'sslClientCertificateKeyPassword=S3cretVal' conflicts", uri)
            .find("S3cret") == std::string::npos);
  // Percent-decoded, as the driver shows it.
  CHECK(redact_driver_message("Password \"p@ss:word\"", "mongodb://u:p%40ss%3Aword@h/").find("ss:w") == std::string::npos);
  // Anything else passes untouched.
  CHECK(redact_driver_message("Invalid host string in URI", uri) == "Invalid host string in URI");
}

TEST_CASE("a MySQL URI that fails to parse never shows the part that failed", "[uri][secrets][mysql]") {
  using mysql::parse_mysql_uri;
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app:S3cretPW/db"),
                    !Catch::Contains("S3cretPW") && Catch::Contains("the port is not a number"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app@h:S3cretPW/db"), !Catch::Contains("S3cretPW"));
  CHECK_THROWS_WITH(parse_mysql_uri("mysql://app@h/db?password=S3cretPW&tabel=x"), !Catch::Contains("S3cretPW"));
}

TEST_CASE("MySQL TLS options: ssl-mode, ssl-ca, ssl-cert, ssl-key and the defaults", "[uri][mysql][tls]") {
  using namespace dibs::mysql;
  auto mode = [](const std::string& uri) { return parse_mysql_uri(uri).effective_ssl_mode(); };
  // A server on another host: its certificate is checked, name included, unless told otherwise.
  CHECK(mode("mysql://app:pw@db.example.com/x") == ssl_mode::verify_identity);
  CHECK(mode("mysql://app:pw@10.1.2.3:3307/x") == ssl_mode::verify_identity);
  // Loopback and a Unix socket: the traffic never leaves the machine.
  CHECK(mode("mysql://root@127.0.0.1/x") == ssl_mode::disabled);
  CHECK(mode("mysql://root@127.0.0.2/x") == ssl_mode::disabled);
  CHECK(mode("mysql://root@localhost/x") == ssl_mode::disabled);
  CHECK(mode("mysql://root@[::1]:3306/x") == ssl_mode::disabled);
  CHECK(mode("mysql://root@db.example.com/x?socket=/run/mysqld/mysqld.sock") == ssl_mode::disabled);
  CHECK(mode("mysql://root@127.0.0.1/x?ssl-ca=/ca.pem") == ssl_mode::verify_ca);
  CHECK(mode("mysql://root@127.0.0.1/x?ssl-cert=/c.pem&ssl-key=/k.pem") == ssl_mode::required);
  // Named as MySQL's clients name them, in any case.
  const auto u = parse_mysql_uri("mysql://app@db/x?ssl-mode=verify_ca&ssl-ca=/etc/ca.pem&ssl-cert=/c.pem&ssl-key=/k.pem");
  CHECK(u.effective_ssl_mode() == ssl_mode::verify_ca);
  CHECK(u.ssl_ca == "/etc/ca.pem");
  CHECK(u.ssl_cert == "/c.pem");
  CHECK(u.ssl_key == "/k.pem");
  CHECK(mode("mysql://app@db/x?ssl-mode=DISABLED") == ssl_mode::disabled);
  CHECK(mode("mysql://app@db/x?ssl-mode=Preferred") == ssl_mode::preferred);
  CHECK(mode("mysql://app@127.0.0.1/x?ssl-mode=REQUIRED") == ssl_mode::required);
  CHECK(mode("mysql://app@127.0.0.1/x?ssl-mode=VERIFY_IDENTITY") == ssl_mode::verify_identity);
  CHECK_THROWS_WITH(mode("mysql://app@db/x?ssl-mode=ON"), Catch::Contains("ssl-mode must be"));
  CHECK_THROWS_WITH(mode("mysql://app@db/x?ssl-mode=VERIFY_CA"), Catch::Contains("needs ssl-ca"));
  CHECK_THROWS_WITH(mode("mysql://app@db/x?ssl-mode=DISABLED&ssl-ca=/ca.pem"), Catch::Contains("DISABLED with"));
}

TEST_CASE("secrets: an API URL is shown with every query value masked, whatever its parameter is called", "[uri][secrets]") {
  // Names that say nothing of a secret: a redactor that goes by name shows them all.
  CHECK(redact_api_url("http://api.example/json/8.8.8.8?auth=A1&appid=B2&sig=C3&key=D4&fields=status,country") ==
        "http://api.example/json/8.8.8.8?auth=***&appid=***&sig=***&key=***&fields=***");
  // A template: a value that is one {field} stays (it says where the item's value goes).
  CHECK(redact_api_url("https://api.example/v1/{ip}?lookup={ip}&token=T0k") ==
        "https://api.example/v1/{ip}?lookup={ip}&token=***");
  CHECK(redact_api_url("https://api.example/v1?q={ip}x") == "https://api.example/v1?q=***");
  // A bare query, empty values, a fragment, user info.
  CHECK(redact_api_url("http://h/x?S3cretKey") == "http://h/x?***");
  CHECK(redact_api_url("http://h/x?a=&b") == "http://h/x?a=&***");
  CHECK(redact_api_url("http://h/x?a=1#frag?k=v") == "http://h/x?a=***#***");
  CHECK(redact_api_url("http://h/x#k=v") == "http://h/x#***");
  CHECK(redact_api_url("http://user:pa/ss@h/x?a=1") == "http://user:***@h/x?a=***");
  CHECK(redact_api_url("http://h:8080/x") == "http://h:8080/x");  // nothing secret: as it is
  CHECK(redact_api_url("http://h/x?") == "http://h/x?");
  // Not a URL at all (a typo in the flag): its query is still masked.
  CHECK(redact_api_url("api.example/x?key=K") == "api.example/x?key=***");
}
