// RFC 3986 percent-encoding of a value put into a URI: every byte but the unreserved ones
// (A-Z a-z 0-9 - . _ ~) as %XX. Shared by the API URL's templates (adapters/http/url_template)
// and a store URI's password from a file (adapters/stores/store_password). Internal.
#pragma once

#include <string>
#include <string_view>

namespace dibs {

inline std::string percent_encoded(std::string_view value) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                            c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace dibs
