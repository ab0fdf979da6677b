// An engine's figures for people and scrapers: Prometheus text exposition (format 0.0.4), and
// a JSON object of the same counters for a status endpoint.
#pragma once

#include <dibs/engine.hpp>

#include <optional>
#include <string>

namespace dibs {

// `store`: the store's counts when they could be read (the pending gauge needs them).
std::string prometheus_text(const engine& e, const std::optional<store_stats>& store);
std::string status_json(const engine& e, const std::optional<store_stats>& store);

}  // namespace dibs
