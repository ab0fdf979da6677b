// TLS for a MySQL/MariaDB connection, from the URI's ssl-mode, ssl-ca, ssl-cert and ssl-key
// (MariaDB Connector/C options).
//   DISABLED         no TLS
//   PREFERRED        TLS when the server offers it, unchecked certificate (checked against
//                    ssl-ca when one is given); plaintext otherwise
//   REQUIRED         TLS or no session; the certificate is not checked
//   VERIFY_CA        REQUIRED, and the certificate must be signed by ssl-ca
//   VERIFY_IDENTITY  VERIFY_CA (ssl-ca, or the CAs the system trusts), and the certificate must
//                    name the host (the default for a non-loopback host)
// Connector/C 3.3 carries on in plaintext when a server offers no TLS unless it must check the
// certificate's name: REQUIRED and VERIFY_CA are therefore also checked once connected (a
// session without a TLS cipher is closed and refused). VERIFY_IDENTITY refuses before logging in.
#pragma once

#include <adapters/mysql/mysql_uri.hpp>

#include <mysql.h>

#include <string>

namespace dibs::mysql {

// Before mysql_real_connect.
void set_tls_options(MYSQL* db, const mysql_uri& u);

// After it: "" when the session is as secure as asked, else why not.
std::string tls_shortfall(MYSQL* db, const mysql_uri& u);

// "ssl-mode=VERIFY_CA, ssl-ca=/etc/ca.pem": for messages about a failed connection.
std::string describe_tls(const mysql_uri& u);

}  // namespace dibs::mysql
