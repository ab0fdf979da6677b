#include "tls_context.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace dibs::http {

void configure_client_tls(boost::asio::ssl::context& ctx, const tls_options& tls, boost::system::error_code& ec) {
  namespace ssl = boost::asio::ssl;
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                  ec);
  if (ec) return;
  // Explicit: a system configuration that allows older versions (or a future default) must not
  // lower it.
  if (SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION) != 1) {
    ec = boost::system::error_code(static_cast<int>(::ERR_get_error()), boost::asio::error::get_ssl_category());
    return;
  }
  if (tls.insecure) {
    ctx.set_verify_mode(ssl::verify_none, ec);
    return;
  }
  ctx.set_verify_mode(ssl::verify_peer, ec);
  if (ec) return;
  if (tls.ca_file.empty())
    ctx.set_default_verify_paths(ec);
  else
    ctx.load_verify_file(tls.ca_file, ec);
}

}  // namespace dibs::http
