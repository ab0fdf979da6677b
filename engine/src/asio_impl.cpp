// The one translation unit that compiles Asio (with its OpenSSL layer) and Beast
// (BOOST_*_SEPARATE_COMPILATION).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
