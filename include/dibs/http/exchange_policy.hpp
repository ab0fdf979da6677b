// The parts of calling an API that the one-key and the batch processors share: waiting for a
// request slot, honoring the API's stop signals, backoff, and what a failed exchange means.
//
// Retryable: refused or reset connections, TLS handshake failures, timeouts, 408, 429, 5xx.
// Permanent: an oversized body and any other 4xx. A retry never comes before the API allows.
#pragma once

#include <dibs/http/client.hpp>
#include <dibs/http/http_figures.hpp>
#include <dibs/http/rate_limiter.hpp>

#include <dibs/counters.hpp>
#include <dibs/net.hpp>
#include <dibs/outcome.hpp>

#include <chrono>
#include <optional>
#include <random>
#include <string>

namespace dibs::http {

// A delay drawn uniformly from [0, min(max, base * 2^(attempt-1))] ("full jitter").
std::chrono::milliseconds full_jitter_backoff(int attempt, std::chrono::milliseconds base,
                                              std::chrono::milliseconds max, std::mt19937_64& rng);

// Returns when `host` may be sent one request: the rate's slot, and any stop the API announced
// meanwhile waited out; true when it had to wait (the rate or a stop held the request back).
// Throws operation_aborted when the caller is cancelled; the slot it held then goes back to the
// limiter.
awaitable<bool> wait_for_slot(rate_limiter& limiter, const std::string& host);

// Reads the stop signals of a response; when the API said stop, pauses `host` for every shard
// and returns how long (0 otherwise): at most `max_wait`, with a warning naming the host and
// what it asked for when it asked more (a Retry-After of 999999999 would park items for years).
// A stop is counted in `figures` (api_stops) when given. `paced`: the client paces the API from
// its refusals (the adaptive limit's rate_finder), so a bare 429 is the pace's to follow, and
// pauses nothing (without one, everyone waits a second). A quota the headers state paces the
// host from then on (rate_limiter::follow_quota); `sent` is when the request went out (default:
// now). `api_pace` (when given) is set when the API said when to come back (Retry-After,
// retry-after-ms, a quota's reset, Gemini's RetryInfo) and that pause was honoured whole (not cut
// to `max_wait`): what makes a 429 the API's pace (judge_exchange).
std::chrono::milliseconds honor_stop_signals(rate_limiter& limiter, const std::string& host, const response& r,
                                             std::chrono::milliseconds max_wait = std::chrono::hours{1},
                                             http_figures* figures = nullptr, bool paced = false,
                                             std::chrono::steady_clock::time_point sent = {}, bool* api_pace = nullptr);

// Whether a refusal honor_stop_signals paused for says the calls went too fast, so the adaptive
// limit hears it with its pause (client::api_paused): a 429 whose pause was the API's own
// (`api_pace`: not cut to the longest wait allowed) and said by Retry-After or retry-after-ms.
// Not a 503 (with Retry-After: downtime, not speed); not a quota's (X-Rl: 0, RateLimit-
// Remaining: 0: an allowance spent until its reset); not one whose when is only in its body (the
// limit heard it already, as a bare refusal); not while the token meter follows the API's
// tokens (`metered`: an LLM's 429s are the meter's to follow, and a limit of 1 there would cost a
// run for minutes).
bool pause_speaks_of_speed(const response& r, bool api_pace, bool metered);
// Tells the origin's adaptive limit of the pause taken when pause_speaks_of_speed.
void tell_limit_of_pause(client& c, const origin& to, const response& r, std::chrono::milliseconds stop_for, bool api_pace,
                         bool metered, std::chrono::steady_clock::time_point sent);

// Counts the exchange in the HTTP figures (status class, latency since `sent`); no-op on null.
void count_exchange(http_figures* figures, const response& r, std::chrono::steady_clock::time_point sent);

// The outcome of an exchange that did not bring a 2xx answer; nullopt for a 2xx, whose body
// the caller judges. `backoff` is this attempt's drawn delay, `stop_for` the API's own;
// `api_pace`: honor_stop_signals found the API's own pause in it (a 429 is then paced: no
// attempt spent).
std::optional<outcome> judge_exchange(const response& r, const client_options& http, std::chrono::milliseconds backoff,
                                      std::chrono::milliseconds stop_for, bool api_pace = false);

}  // namespace dibs::http
