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
//
// The dashboard (GET /) and its token. The page embeds a random token made once per process,
// and its buttons send it in the header X-Dibs-Token. Threat model, with what stops each:
//   - another site's page (CSRF): its Origin is foreign (refused), and it cannot add
//     X-Dibs-Control or X-Dibs-Token without a CORS preflight, which this server never
//     approves; nor can it read the token (GET / checks Host, and the answer carries no CORS
//     header, so a cross-origin read is blocked by the browser);
//   - DNS rebinding: the Host check, on every request (the page and the token included);
//   - framing the page to trick a click (clickjacking): the page is sent with
//     `frame-ancestors 'none'` and X-Frame-Options: DENY;
//   - a dashboard tab left open from an earlier run on the same port: its token is the old
//     process's, so its POSTs are refused (403 "reload the page") instead of steering a run the
//     user is not looking at.
// Every browser sends Origin with a POST (same-origin ones too), so the rule is: a POST with an
// Origin must carry this process's token (X-Dibs-Control alone is not enough there); a POST
// without one is a program's (curl, a script), for which X-Dibs-Control (any value) or the token
// suffices. A wrong token is refused in both cases. The token is not a password: anyone who can
// GET / may read it; who may reach the port at all is the job of --metrics-address and, in
// front of it, a reverse proxy with authentication (docs/operations.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

// The header every POST must carry (any value; "1" by convention).
inline constexpr std::string_view control_header = "X-Dibs-Control";
// The header the dashboard's POSTs carry: the page's token (control_access::token).
inline constexpr std::string_view token_header = "X-Dibs-Token";

struct control_access {
  std::uint16_t port = 0;                 // where the server listens
  std::string listen_address;             // "127.0.0.1", "::1", "0.0.0.0"...
  std::vector<std::string> extra_hosts;   // names accepted in Host and Origin, any port
  bool posts_from_loopback_only = true;   // a POST from another host is refused (403)
  // The dashboard's per-process token; empty: none (then a browser's POST needs X-Dibs-Control,
  // as before there was a page).
  std::string token = {};

  bool host_allowed(std::string_view host_header) const;
  bool origin_allowed(std::string_view origin) const;
};

struct refusal {
  unsigned status;  // 421 (wrong Host) or 403
  std::string reason;
};

// nullopt: go ahead. `origin`, `control` and `token` are nullopt when the header is absent;
// `peer_is_loopback`: the connection comes from this host (127.0.0.0/8, ::1).
std::optional<refusal> check_control_request(const control_access& access, bool is_post, std::string_view host,
                                             std::optional<std::string_view> origin,
                                             std::optional<std::string_view> control, bool peer_is_loopback = true,
                                             std::optional<std::string_view> token = std::nullopt);

// A fresh random token (32 hex digits) for control_access::token.
std::string make_control_token();

}  // namespace dibs::http
