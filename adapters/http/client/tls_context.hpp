// The client's TLS context: TLS 1.2 at least (set here, not left to the system's OpenSSL
// configuration), the server's certificate verified against the system's CAs or `ca_file`
// unless `insecure`.
#pragma once

#include <dibs/http/client.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/system/error_code.hpp>

namespace dibs::http {

// Sets `ctx` up for `tls`; `ec` says why it could not be (an unreadable CA file, say).
void configure_client_tls(boost::asio::ssl::context& ctx, const tls_options& tls, boost::system::error_code& ec);

}  // namespace dibs::http
