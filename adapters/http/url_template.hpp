// URL templates: `http://host:port/json/{originatingIp}?fields=...`. Each `{field}` is replaced
// by the job's field value, percent-encoded (RFC 3986: only unreserved characters stay as they
// are), so a value can never change the host or escape its path segment.
#pragma once

#include <dibs/job.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

std::string percent_encode(std::string_view value);

class url_template {
 public:
  // Throws std::invalid_argument with the reason (bad scheme, no host, bad port, unclosed `{`,
  // placeholder in the host...).
  static url_template parse(const std::string& text);

  const std::string& scheme() const { return scheme_; }
  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }
  // The fields the template reads, in order of first use.
  const std::vector<std::string>& fields() const { return field_names_; }
  const std::string& text() const { return text_; }

  // The request target (path and query) for `j`, or an error saying which field is missing or
  // not a string.
  struct expansion {
    std::string target;
    std::string error;  // empty on success
  };
  expansion expand(const job& j) const;

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
};

}  // namespace dibs::http
