#include "control_framing.hpp"

#include <boost/asio/error.hpp>

#include <iterator>

namespace dibs::http {

namespace bhttp = boost::beast::http;

std::optional<refusal> check_framing(const bhttp::fields& head) {
  if (head.find(bhttp::field::transfer_encoding) != head.end())
    return refusal{411, "the controls take a body only with a Content-Length (no Transfer-Encoding)"};
  for (const auto name : {std::string_view("Host"), std::string_view("Origin"), std::string_view("Authorization"),
                          std::string_view("Content-Length"), token_header, control_header}) {
    const auto [first, last] = head.equal_range(name);
    if (first != last && std::next(first) != last)
      return refusal{400, "the header " + std::string(name) + " is given more than once"};
  }
  return std::nullopt;
}

std::optional<refusal> read_failure_answer(const boost::system::error_code& ec, bool header_done) {
  if (ec == bhttp::error::header_limit || (ec == bhttp::error::buffer_overflow && !header_done))
    return refusal{431, "the request's header is larger than " + std::to_string(control_limits::header_bytes) + " bytes"};
  if (ec == bhttp::error::body_limit || ec == bhttp::error::buffer_overflow)
    return refusal{413, "the request's body is larger than these controls take (" +
                            std::to_string(control_limits::body_bytes) + " bytes; none from another host)"};
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
      ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message)
    return refusal{400, "the request is not well-formed HTTP/1.1"};
  return std::nullopt;  // the peer closed, or the time ran out: nobody to answer
}

}  // namespace dibs::http
