// A certificate authority and a server certificate made at test time (OpenSSL), for HTTPS
// tests: nothing secret or expiring is committed, and every run has its own CA.
#pragma once

#include <string>

namespace dibs::test {

struct test_pki {
  std::string dir;          // a fresh directory under /tmp
  std::string ca_cert;      // PEM: the CA that signed the server certificate
  std::string server_cert;  // PEM: for DNS name `host` only (so 127.0.0.1 is a wrong host)
  std::string server_key;   // PEM: its private key
};

// Throws std::runtime_error when OpenSSL refuses a step.
test_pki make_test_pki(const std::string& host = "localhost");

}  // namespace dibs::test
