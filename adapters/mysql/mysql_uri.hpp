// mysql://user:password@host:port/database?table=jobs&socket=/path&ssl-mode=VERIFY_CA&ssl-ca=/ca.pem
// (percent-encoded user and password; port 3306 by default). TLS options, named as MySQL's own
// clients name them: ssl-mode (DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY), ssl-ca,
// ssl-cert, ssl-key.
// Several hosts, as the mysql client and Connector/C users write them for a cluster (MariaDB
// Galera: every node takes writes): mysql://user@h1:p1,h2:p2,h3:p3/db?table=jobs. A worker
// connects to the first that answers and moves on to another when its server is gone
// (mysql_hosts.hpp decides which).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dibs::mysql {

struct host_port {
  std::string host;
  std::uint16_t port = 3306;
  bool operator==(const host_port&) const = default;
};

enum class ssl_mode { disabled, preferred, required, verify_ca, verify_identity };

struct mysql_uri {
  std::string user;
  std::string password;
  std::string host = "127.0.0.1";  // the host a connection goes to: the first of `hosts`, or
  std::uint16_t port = 3306;       // the one at_host() chose
  std::vector<host_port> hosts;    // every host the URI names, in its order (at least one)
  std::string database;
  std::string table = "jobs";
  bool table_named = false;  // the URI says ?table= (else the default, jobs)
  std::string socket;
  std::optional<ssl_mode> ssl;  // as given; effective_ssl_mode() applies the default
  std::string ssl_ca, ssl_cert, ssl_key;

  // Without ssl-mode: VERIFY_IDENTITY for a server on another host (the certificate must be
  // signed by ssl-ca, or by a CA the system trusts, and name the host); for a Unix socket or a
  // loopback host (every host, when there are several), where the traffic never leaves the
  // machine, DISABLED -- unless ssl-ca, ssl-cert or ssl-key is given: then VERIFY_CA (with
  // ssl-ca) or REQUIRED.
  ssl_mode effective_ssl_mode() const;
};

// `u` connecting to its host number `i` (hosts[i]).
mysql_uri at_host(const mysql_uri& u, std::size_t i);

// localhost, 127.0.0.0/8, ::1 ([::1]).
bool is_loopback_host(const std::string& host);
const char* to_string(ssl_mode m);

// Throws std::invalid_argument naming what is wrong; never echoes the password, nor any part of
// the URI that failed to parse (it may be a piece of a password).
mysql_uri parse_mysql_uri(const std::string& text);

}  // namespace dibs::mysql
