// dibs's TLS default for PostgreSQL, as for MySQL: a server on another host is never reached in
// plaintext nor through an unchecked certificate. libpq's own default (sslmode=prefer) would go
// on without TLS, or with any certificate; so, unless the URI (or PGSSLMODE) names an sslmode,
// a URI naming any host that is not loopback (nor a Unix socket) gets sslmode=verify-full, with
// the system's CAs (Debian's bundle) unless the user has a root certificate of their own
// (sslrootcert=, PGSSLROOTCERT, ~/.postgresql/root.crt). Loopback keeps libpq's default: that
// traffic never leaves the machine. Decided without a server (tests/unit/test_pg_protocol.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dibs::pg {

inline constexpr const char* system_ca_bundle = "/etc/ssl/certs/ca-certificates.crt";

// The hosts a postgresql:// URI names (in its authority and in `host=` parameters), without
// ports; an empty string for the default (a Unix socket).
std::vector<std::string> uri_hosts(std::string_view uri);
// localhost, 127.0.0.0/8, ::1, or a Unix socket (empty, or a path).
bool is_local_host(std::string_view host);

struct tls_environment {
  bool sslmode_set = false;   // PGSSLMODE
  bool own_root_cert = false; // PGSSLROOTCERT, or ~/.postgresql/root.crt exists
};
tls_environment current_tls_environment();

// `uri` (no table parameter) with the default above applied.
std::string with_tls_default(const std::string& uri, const tls_environment& env);

}  // namespace dibs::pg
