// URL templates: `http://host:port/json/{originatingIp}?fields=...`. Each `{field}` is replaced
// by the job's field value, percent-encoded (RFC 3986: only unreserved characters stay as they
// are), so a value can never change the host or escape its path segment. A value that would be
// a whole "." or ".." path segment is refused (a normalising proxy would resolve it), and so is a
// template whose own path has one.
#pragma once

#include <dibs/http/origin.hpp>

#include <dibs/job.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

std::string percent_encode(std::string_view value);

// The longest source value sent by default: a value is a key (an IP address, an id, a short
// text), and one of 10 MB once became a 10 MB GET.
inline constexpr std::size_t default_max_value_bytes = 2048;

// A job's source field as request text: its value, or why it can't be used (missing, not a
// string, empty, longer than `max_bytes`: the item fails, the run goes on).
struct source_text {
  std::string_view value;
  std::string error;  // empty when `value` is usable
};
source_text source_field(const job& j, const std::string& name, std::size_t max_bytes = default_max_value_bytes);

class url_template {
 public:
  // Throws std::invalid_argument with the reason (bad scheme, no host, bad port, unclosed `{`,
  // placeholder in the host...).
  // `setting` names the setting in those messages ("url", "batch_url"; setting_error.hpp says
  // how a program shows them).
  static url_template parse(const std::string& text, const std::string& setting = "url");

  const std::string& scheme() const { return scheme_; }
  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }
  http::origin origin() const { return {host_, port_, scheme_ == "https"}; }
  // The fields the template reads, in order of first use.
  const std::vector<std::string>& fields() const { return field_names_; }
  const std::string& text() const { return text_; }

  // The request target (path and query) for `j`, or an error saying which field is missing, not
  // a string, or a dot segment.
  struct expansion {
    std::string target;
    std::string error;  // empty on success
  };
  expansion expand(const job& j) const;

  // The longest field value expand() takes (in bytes, before percent-encoding).
  std::size_t max_value_bytes() const { return max_value_bytes_; }
  void set_max_value_bytes(std::size_t n) { max_value_bytes_ = n; }

 private:
  struct piece {
    bool is_field = false;
    std::string text;  // literal text, or the field name
  };
  std::string text_;
  std::string scheme_;
  std::string host_;
  std::uint16_t port_ = 0;
  std::vector<piece> pieces_;  // of the target
  std::vector<std::string> field_names_;
  std::size_t max_value_bytes_ = default_max_value_bytes;
};

}  // namespace dibs::http
