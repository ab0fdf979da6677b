// The client's response parser: Beast's HTTP/1.1 parsing (its header and body limits, chunked
// bodies, keep-alive rules) writing the status, the fields and the body straight into a
// `response`. Beast's own parser would first build a message whose every field is a separate
// allocation, which the client then copied field by field: at tens of thousands of answers a
// second that copying was a fifth of the client's allocations.
//
// The body gets `body_slack` spare bytes of capacity, so that the JSON check (simdjson reads up
// to 64 bytes past the end) parses it where it lies instead of copying it first.
#pragma once

#include <dibs/http/client.hpp>

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <cstdint>
#include <string>

namespace dibs::http {

inline constexpr std::size_t body_slack = 64;

class response_reader final : public boost::beast::http::basic_parser<false> {
 public:
  using error_code = boost::system::error_code;
  using string_view = boost::beast::string_view;

  // Writes into `out`, which must outlive the reader; its status, headers and body are replaced.
  explicit response_reader(response& out) : out_(out) {
    out_.status = 0;
    out_.headers.clear();
    out_.body.clear();
  }

 private:
  void on_request_impl(boost::beast::http::verb, string_view, string_view, int, error_code&) override {}
  void on_response_impl(int code, string_view, int, error_code&) override {
    out_.status = code;
    out_.headers.reserve(8);  // an API answers a handful; more just grow the vector
  }
  void on_field_impl(boost::beast::http::field, string_view name, string_view value, error_code&) override {
    out_.headers.emplace_back(std::string(name), std::string(value));
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code& ec) override {
    if (!length) return;
    // basic_parser has already refused a length over its body_limit; this guards size_t itself.
    if (*length > out_.body.max_size() - body_slack) {
      ec = boost::beast::http::error::buffer_overflow;
      return;
    }
    out_.body.reserve(static_cast<std::size_t>(*length) + body_slack);
  }
  std::size_t on_body_impl(string_view body, error_code&) override {
    out_.body.append(body.data(), body.size());
    return body.size();
  }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code&) override {
    out_.body.append(body.data(), body.size());
    return body.size();
  }
  void on_finish_impl(error_code&) override {}

  response& out_;
};

}  // namespace dibs::http
