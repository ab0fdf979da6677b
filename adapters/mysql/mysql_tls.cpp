#include "mysql_tls.hpp"

namespace dibs::mysql {

void set_tls_options(MYSQL* db, const mysql_uri& u) {
  const auto mode = u.effective_ssl_mode();
  // Both set every time: Connector/C's own defaults differ between versions (3.4 verifies by default).
  my_bool use_tls = mode != ssl_mode::disabled;
  my_bool verify_identity = mode == ssl_mode::verify_identity;
  ::mysql_optionsv(db, MYSQL_OPT_SSL_ENFORCE, &use_tls);
  ::mysql_optionsv(db, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify_identity);
  if (mode == ssl_mode::disabled) return;
  // A CA given makes Connector/C check the chain (VERIFY_CA); the name is checked only with
  // MYSQL_OPT_SSL_VERIFY_SERVER_CERT.
  if (!u.ssl_ca.empty()) ::mysql_optionsv(db, MYSQL_OPT_SSL_CA, u.ssl_ca.c_str());
  if (!u.ssl_cert.empty()) ::mysql_optionsv(db, MYSQL_OPT_SSL_CERT, u.ssl_cert.c_str());
  if (!u.ssl_key.empty()) ::mysql_optionsv(db, MYSQL_OPT_SSL_KEY, u.ssl_key.c_str());
}

std::string tls_shortfall(MYSQL* db, const mysql_uri& u) {
  const auto mode = u.effective_ssl_mode();
  if (mode == ssl_mode::disabled || mode == ssl_mode::preferred) return "";
  const char* cipher = mysql_get_ssl_cipher(db);
  if (cipher && *cipher) return "";
  return std::string("ssl-mode=") + to_string(mode) + " but the server gave a session without TLS (does it have a certificate?)";
}

std::string describe_tls(const mysql_uri& u) {
  std::string out = std::string("ssl-mode=") + to_string(u.effective_ssl_mode());
  if (!u.ssl_ca.empty()) out += ", ssl-ca=" + u.ssl_ca;
  return out;
}

}  // namespace dibs::mysql
