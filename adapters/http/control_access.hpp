// Who may use an engine's HTTP controls (control_server), decided from the request's headers
// alone. The controls listen on loopback, but any web page the user opens can send requests
// there:
//   - a page of another site can POST /pause with a "simple" request (text/plain body, no custom
//     header) that the browser sends without asking the server first: refused because its Origin
//     is not the server's own, and because a POST must carry the header X-Dibs-Control, which a
//     browser sends cross-site only after a CORS preflight that this server never grants;
//   - DNS rebinding (evil.example re-resolved to 127.0.0.1, so the page is "same-origin" with
//     the controls and may read /status): refused because its Host header says evil.example.
// Accepted Host names: localhost, 127.0.0.1, [::1] and the address the server listens on, with
// the server's own port (or none); listening on every address (0.0.0.0, ::), any IP address
// with the server's own port (a scraper that knows the pod by its IP: a rebinding attack needs
// a name, since a page whose URL holds our IP and port is a page we served); and any name the
// operator adds (a reverse proxy's), with any port.
// The controls that change the run (POST /pause, /resume) are taken only from a loopback peer
// unless the operator says otherwise: --metrics-address opens the read-only pages to the
// network, not the switch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

// The header every POST must carry (any value; "1" by convention).
inline constexpr std::string_view control_header = "X-Dibs-Control";

struct control_access {
  std::uint16_t port = 0;                 // where the server listens
  std::string listen_address;             // "127.0.0.1", "::1", "0.0.0.0"...
  std::vector<std::string> extra_hosts;   // names accepted in Host and Origin, any port
  bool posts_from_loopback_only = true;   // a POST from another host is refused (403)

  bool host_allowed(std::string_view host_header) const;
  bool origin_allowed(std::string_view origin) const;
};

struct refusal {
  unsigned status;  // 421 (wrong Host) or 403
  std::string reason;
};

// nullopt: go ahead. `origin` and `control` are nullopt when the header is absent;
// `peer_is_loopback`: the connection comes from this host (127.0.0.0/8, ::1).
std::optional<refusal> check_control_request(const control_access& access, bool is_post, std::string_view host,
                                             std::optional<std::string_view> origin,
                                             std::optional<std::string_view> control, bool peer_is_loopback = true);

}  // namespace dibs::http
