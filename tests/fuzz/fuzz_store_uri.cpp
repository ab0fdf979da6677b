// The store URI grammar (include/dibs/stores/store_uri.hpp): any text either parses or is refused
// with an invalid_argument that never shows a password; a parsed network URI is cut around its
// hosts without losing a byte (with_hosts of its own hosts gives it back), and the driver never
// gets dibs's own collection= option.
#include <dibs/stores/store_uri.hpp>

#include "engine/src/uri_redact.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  try {
    const auto u = dibs::parse_store_uri(input);
    if (u.kind == dibs::store_kind::jsonl) return u.path.empty() ? (std::abort(), 0) : 0;
    if (u.before_hosts + u.hosts + u.after_hosts != input) std::abort();
    if (u.with_hosts(u.hosts) != input) std::abort();
    if (u.kind == dibs::store_kind::mongodb) {  // no option of the driver's query is named collection
      const auto q = u.driver_uri.find('?', u.before_hosts.size() + u.hosts.size());
      const auto query = q == std::string::npos ? std::string() : lower(u.driver_uri.substr(q + 1));
      for (std::size_t s = 0; s <= query.size();) {
        const auto sep = std::min(query.find_first_of("&;", s), query.size());
        if (query.compare(s, 11, "collection=") == 0) std::abort();
        s = sep + 1;
      }
    }
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    if (why.empty()) std::abort();
    // mysql:// refusals are the MySQL parser's own (fuzz target sql_names). Every other one shows
    // the URI only redacted, followed by words of its own: nothing else cut out of the input.
    if (input.rfind("mysql://", 0) == 0) return 0;
    const std::string shown = dibs::redact_uri(input);
    const std::string prefix = ("store '" + shown + "': ").c_str();  // what() ends at a NUL of the input
    if (why.rfind(prefix, 0) != 0) std::abort();
    // ... and the redacted URI holds no password: from the first ':' after the scheme to the
    // last '@', when it appears once in the input.
    const auto scheme = input.find("://");
    const auto at = input.rfind('@');
    if (scheme != std::string::npos && at != std::string::npos && at > scheme) {
      const auto colon = input.find(':', scheme + 3);
      if (colon != std::string::npos && colon < at) {
        const auto password = input.substr(colon + 1, at - colon - 1);
        const bool once = !password.empty() && password.find('*') == std::string::npos &&
                          input.find(password) == input.rfind(password);
        if (once && shown.find(password) != std::string::npos) std::abort();
      }
    }
  }
  return 0;
}
