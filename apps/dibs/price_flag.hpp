// --price 'input=0.15/1M,output=0.60/1M': what an LLM API's tokens cost, per token, read as the
// providers' price lists write them (a price per million or thousand tokens, or per token).
#pragma once

#include <dibs/http/http_processor.hpp>

#include <string>

namespace dibs::cli {

// Throws std::invalid_argument naming the flag and what it expected.
http::processor_options::token_prices parse_prices(const std::string& text);

}  // namespace dibs::cli
