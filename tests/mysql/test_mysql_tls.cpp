// TLS to MariaDB: the fixture's private server has a certificate made at start
// (tests/servers/mariadb_ctl.sh: DIR/tls/ca.pem signed it, for 127.0.0.1; other-ca.pem did not).
#include "support/mysql_env.hpp"

#include <dibs/stores/mysql_store.hpp>

#include <catch2/catch.hpp>

#include <fstream>

using namespace dibs;

namespace {
const std::string tls_dir = std::string(DIBS_SERVERS_DIR) + "/tls";

// The fixture's server URI with `tls` query options added.
std::string uri_with(const std::string& tls) { return test::mysql_uri_for(test::unique_table("tls")) + "&" + tls; }

// A store (it connects at once) and the TLS cipher of its session ("" for none).
std::string session_cipher(const std::string& uri) {
  sql::mysql_options o;
  o.uri = uri;
  o.threads = 1;
  sql::mysql_store st(o);
  return st.query_value("SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'")
      .value_or("");
}

bool fixture_has_tls() {
  if (std::getenv("MYSQL_URI")) return false;  // a server of the user's: its CA is not ours
  return std::ifstream(tls_dir + "/ca.pem").good();
}
}  // namespace

TEST_CASE("MariaDB over TLS: VERIFY_CA with the right CA, REQUIRED without one, a wrong CA refused", "[mysql][tls]") {
  if (!fixture_has_tls()) {
    WARN("skipped: MYSQL_URI names a server whose certificate this test did not make");
    return;
  }
  CHECK_FALSE(session_cipher(uri_with("ssl-mode=VERIFY_CA&ssl-ca=" + tls_dir + "/ca.pem")).empty());
  // The certificate names 127.0.0.1: the host is checked too.
  CHECK_FALSE(session_cipher(uri_with("ssl-mode=VERIFY_IDENTITY&ssl-ca=" + tls_dir + "/ca.pem")).empty());
  CHECK_FALSE(session_cipher(uri_with("ssl-mode=REQUIRED")).empty());
  CHECK_FALSE(session_cipher(uri_with("ssl-mode=PREFERRED")).empty());
  // Loopback without any TLS option: DISABLED (the traffic never leaves the machine).
  CHECK(session_cipher(test::mysql_uri_for(test::unique_table("tls"))).empty());

  CHECK_THROWS_WITH(session_cipher(uri_with("ssl-mode=VERIFY_CA&ssl-ca=" + tls_dir + "/other-ca.pem")),
                    Catch::Contains("TLS with ssl-mode=VERIFY_CA, ssl-ca=" + tls_dir + "/other-ca.pem"));
  CHECK_THROWS_WITH(session_cipher(uri_with("ssl-mode=VERIFY_IDENTITY&ssl-ca=" + tls_dir + "/other-ca.pem")),
                    Catch::Contains("ssl-mode=VERIFY_IDENTITY"));
  // Without ssl-ca, VERIFY_IDENTITY trusts the system's CAs, which never signed a test certificate.
  CHECK_THROWS_WITH(session_cipher(uri_with("ssl-mode=VERIFY_IDENTITY")), Catch::Contains("cannot connect"));
}
