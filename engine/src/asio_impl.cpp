// The one translation unit that compiles Asio and Beast (BOOST_*_SEPARATE_COMPILATION).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
