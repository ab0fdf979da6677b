// What a request can cost and what its answer says it cost, in millionths of a dollar, at the
// prices given (price): the money budgets' measure (spend_budget.hpp). Pure.
#pragma once

#include "adapters/http/rate/request_tokens.hpp"

#include <dibs/http/client.hpp>
#include <dibs/http/http_processor.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace dibs::http {

// The most a request of `body` can cost: its prompt as `e` estimates it (erring high) at the
// input price, its max_tokens (without one, the output the answers have used) at the output
// price; rounded up.
std::uint64_t most_cost(const token_estimator& e, const std::string& body, const processor_options::token_prices& p);

// What the answer `r` says its request cost: its usage at the prices; 0 for a refusal (a 4xx or
// 5xx, or never written: the provider charges none); nullopt when it can't tell (written and
// lost, or a 2xx without usage): the most stands.
std::optional<std::uint64_t> answer_cost(const response& r, const processor_options::token_prices& p);

}  // namespace dibs::http
