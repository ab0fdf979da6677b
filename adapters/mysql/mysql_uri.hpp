// mysql://user:password@host:port/database?table=jobs&socket=/path&ssl-mode=VERIFY_CA&ssl-ca=/ca.pem
// (percent-encoded user and password; port 3306 by default). TLS options, named as MySQL's own
// clients name them: ssl-mode (DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY), ssl-ca,
// ssl-cert, ssl-key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dibs::mysql {

enum class ssl_mode { disabled, preferred, required, verify_ca, verify_identity };

struct mysql_uri {
  std::string user;
  std::string password;
  std::string host = "127.0.0.1";
  std::uint16_t port = 3306;
  std::string database;
  std::string table = "jobs";
  bool table_named = false;  // the URI says ?table= (else the default, jobs)
  std::string socket;
  std::optional<ssl_mode> ssl;  // as given; effective_ssl_mode() applies the default
  std::string ssl_ca, ssl_cert, ssl_key;

  // Without ssl-mode: VERIFY_IDENTITY for a server on another host (the certificate must be
  // signed by ssl-ca, or by a CA the system trusts, and name the host); for a Unix socket or a
  // loopback host, where the traffic never leaves the machine, DISABLED -- unless ssl-ca,
  // ssl-cert or ssl-key is given: then VERIFY_CA (with ssl-ca) or REQUIRED.
  ssl_mode effective_ssl_mode() const;
};

// localhost, 127.0.0.0/8, ::1 ([::1]).
bool is_loopback_host(const std::string& host);
const char* to_string(ssl_mode m);

// Throws std::invalid_argument naming what is wrong; never echoes the password, nor any part of
// the URI that failed to parse (it may be a piece of a password).
mysql_uri parse_mysql_uri(const std::string& text);

}  // namespace dibs::mysql
