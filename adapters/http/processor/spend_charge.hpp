// What a request can cost and what its answer says it cost, in millionths of a dollar, at the
// prices given (price): the money budgets' measure (spend_budget.hpp). Pure.
#pragma once

#include "adapters/http/budget/spend_budget.hpp"
#include "adapters/http/rate/request_tokens.hpp"

#include <dibs/http/client.hpp>
#include <dibs/http/http_processor.hpp>

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace dibs::http {

// The most a request of `body_bytes` asking for `max_out` tokens (max_output_tokens) can cost:
// its prompt as `e` estimates it (erring high) at the input price, its max_tokens (without one,
// the output the answers have used) at the output price; rounded up.
std::uint64_t most_cost(const token_estimator& e, std::size_t body_bytes, std::optional<std::int64_t> max_out,
                        const processor_options::token_prices& p);

// What the answer `r` says its request cost: its usage at the prices (Anthropic's cache writes
// at 1.25 times the input price and its cache reads at 0.1 times, as it bills them); 0 for a
// refusal (a 4xx or 5xx, or never written: the provider charges none); nullopt when it can't
// tell (written and lost, or a 2xx without usage): the most stands.
// `read`: the answer's usage where the token meter read it already (not read again).
std::optional<std::uint64_t> answer_cost(const response& r, const processor_options::token_prices& p,
                                         const token_usage* read = nullptr);

// Why a request whose most is `most` could never be sent under one of `budgets` (more than the
// whole of it): its item fails at once, with no call; "" when it fits every one.
std::string never_fits(const std::vector<std::shared_ptr<spend_budget>>& budgets, std::uint64_t most);

// `most` taken from every budget, once each: the tickets, or nullopt when one had no room (the
// others' given back whole).
awaitable<std::optional<std::vector<spend_ticket>>> take_spend(const std::vector<std::shared_ptr<spend_budget>>& budgets,
                                                               std::uint64_t most);
// The tickets settled by the answer `r` (`refused`: a call budget stopped it before it went).
void settle_spend(std::vector<spend_ticket>& tickets, const response& r, bool refused, const processor_options::token_prices& p,
                  const token_usage* read = nullptr);

}  // namespace dibs::http
