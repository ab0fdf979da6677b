#include "test_pki.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace dibs::test {

namespace {
struct key_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct cert_free {
  void operator()(X509* x) const { X509_free(x); }
};
using key_ptr = std::unique_ptr<EVP_PKEY, key_free>;
using cert_ptr = std::unique_ptr<X509, cert_free>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what + " failed");
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(ext != nullptr, value);
  check(X509_add_ext(cert, ext, -1) == 1, "X509_add_ext");
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, signed by `issuer_key` (`issuer` null: self-signed).
cert_ptr make_cert(EVP_PKEY* key, const std::string& cn, long serial, X509* issuer, EVP_PKEY* issuer_key) {
  cert_ptr cert(X509_new());
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509* signer = issuer ? issuer : cert.get();
  if (!issuer) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    const std::string san = "DNS:" + cn;
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    add_extension(cert.get(), signer, NID_subject_alt_name, san.c_str());
    add_extension(cert.get(), signer, NID_authority_key_identifier, "keyid");
  }
  check(X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

void write_cert(const std::string& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open certificate file");
  const bool ok = PEM_write_X509(f, cert) == 1;
  std::fclose(f);
  check(ok, "PEM_write_X509");
}

void write_key(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  check(f != nullptr, "open key file");
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  check(ok, "PEM_write_PrivateKey");
}
}  // namespace

test_pki make_test_pki(const std::string& host) {
  char dir_template[] = "/tmp/dibs-pki-XXXXXX";
  check(::mkdtemp(dir_template) != nullptr, "mkdtemp");
  test_pki pki;
  pki.dir = dir_template;
  pki.ca_cert = pki.dir + "/ca.pem";
  pki.server_cert = pki.dir + "/server.pem";
  pki.server_key = pki.dir + "/server-key.pem";

  key_ptr ca_key(EVP_EC_gen("P-256"));
  key_ptr server_key(EVP_EC_gen("P-256"));
  check(ca_key && server_key, "EVP_EC_gen");
  auto ca = make_cert(ca_key.get(), "dibs test CA", 1, nullptr, nullptr);
  auto server = make_cert(server_key.get(), host, 2, ca.get(), ca_key.get());
  write_cert(pki.ca_cert, ca.get());
  write_cert(pki.server_cert, server.get());
  write_key(pki.server_key, server_key.get());
  return pki;
}

}  // namespace dibs::test
