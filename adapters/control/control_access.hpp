// Who may use an engine's HTTP controls (control_server), decided from the request's headers
// alone. The controls listen on loopback, but any web page the user opens can send requests
// there:
//   - a page of another site can POST /pause with a "simple" request (text/plain body, no custom
//     header) that the browser sends without asking the server first: refused because its Origin
//     is not the server's own, and because a POST must carry a credential in a header
//     (Authorization or X-Dibs-Token), which a browser sends cross-site only after a CORS
//     preflight that this server never grants;
//   - DNS rebinding (evil.example re-resolved to 127.0.0.1, so the page is "same-origin" with
//     the controls and may read /status): refused because its Host header says evil.example.
// Accepted Host names: localhost, 127.0.0.1, [::1] and the address the server listens on, with
// the server's own port (or none); listening on every address (0.0.0.0, ::), any IP address
// with the server's own port (a scraper that knows the pod by its IP: a rebinding attack needs
// a name, since a page whose URL holds our IP and port is a page we served); and any name the
// operator adds (a reverse proxy's), with any port.
// The controls that change the run (every POST) are taken only from a loopback peer unless the
// operator says otherwise: metrics_address opens the read-only pages to the network, not the
// switch.
//
// Who may POST, then. Two credentials, never the same string:
//   - the controls' KEY, for programs (curl, scripts, an operator's tooling): the header
//     `Authorization: Bearer KEY`. The operator gives it (dibs: control_key_file, a file only
//     its owner can read, or DIBS_CONTROL_KEY); it is never written into a page or a log. Without
//     one, a program's POST is refused (401): a process that can merely reach the port can't
//     steer the run (before keys, any local process or sidecar could POST /concurrency 1000000).
//   - the dashboard's TOKEN, for the page's buttons (header X-Dibs-Token): random, made once per
//     process, embedded in the page only when the page is served to a peer that may POST (this
//     host: the user's browser, or a reverse proxy on this host, which does its own
//     authentication); served to another host, the page is read-only. A request with the token
//     must carry an Origin that is the controls' own (a browser always sends one with a POST).
// Limits, said plainly: whoever can connect from this host can load the page and so use its
// token, as the user's browser does; the key keeps out programs that are not given it, not a
// process that goes through the page. Where whatever shares 127.0.0.1 (a sidecar) is not to be
// trusted, dibs needs a network namespace of its own (docs/operations.md, the controls' key).
//
// The dashboard (GET /) and its token: threat model, with what stops each:
//   - another site's page (CSRF): its Origin is foreign (refused), and it cannot add
//     Authorization or X-Dibs-Token without a CORS preflight, which this server never approves;
//     nor can it read the token (GET / checks Host, and the answer carries no CORS header, so a
//     cross-origin read is blocked by the browser);
//   - DNS rebinding: the Host check, on every request (the page and the token included);
//   - framing the page to trick a click (clickjacking): the page is sent with
//     `frame-ancestors 'none'` and X-Frame-Options: DENY;
//   - a dashboard tab left open from an earlier run on the same port: its token is the old
//     process's, so its POSTs are refused (403 "reload the page") instead of steering a run the
//     user is not looking at.
#pragma once

#include <dibs/control/control_server.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dibs::http {

// What a program's POSTs carry: "Bearer " and the controls' key (control_access::key).
inline constexpr std::string_view key_header = "Authorization";
// The header the dashboard's POSTs carry: the page's token (control_access::token).
inline constexpr std::string_view token_header = "X-Dibs-Token";
// The header programs sent before the controls had a key; accepted, no longer needed.
inline constexpr std::string_view control_header = "X-Dibs-Control";

struct control_access {
  std::uint16_t port = 0;                 // where the server listens
  std::string listen_address;             // "127.0.0.1", "::1", "0.0.0.0"...
  std::vector<std::string> extra_hosts;   // names accepted in Host and Origin, any port
  bool posts_from_loopback_only = true;   // a POST from another host is refused (403)
  // The dashboard's per-process token; empty: none (then only programs, with the key, may POST).
  std::string token = {};
  // The key programs send; empty: none was given, and a program's POST is refused (401).
  std::string key = {};

  bool host_allowed(std::string_view host_header) const;
  bool origin_allowed(std::string_view origin) const;
  // Whether a page served to this peer carries the token (a peer that may POST).
  bool page_gets_token(bool peer_is_loopback) const { return peer_is_loopback || !posts_from_loopback_only; }
};

struct refusal {
  unsigned status;  // 421 (wrong Host), 401 (no key, or not this one), 403, 400, 411, 413, 431
  std::string reason;
};

// What the checks read of a request: its method, its headers (nullopt when absent) and its peer.
struct control_request {
  bool is_post = false;
  std::string_view host;
  std::optional<std::string_view> origin = std::nullopt;
  std::optional<std::string_view> token = std::nullopt;          // X-Dibs-Token
  std::optional<std::string_view> authorization = std::nullopt;  // Authorization
  bool peer_is_loopback = true;  // the connection comes from this host (127.0.0.0/8, ::1)
};

// nullopt: go ahead.
std::optional<refusal> check_control_request(const control_access& access, const control_request& r);

// A fresh random token (32 hex digits) for control_access::token.
std::string make_control_token();

// control_key_problem(key): in <dibs/control/control_server.hpp>, where an embedder checks a key.

}  // namespace dibs::http
