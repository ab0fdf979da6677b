#include "endpoint_refresh.hpp"

#include <algorithm>

namespace dibs::http {

bool should_resolve(const endpoint_freshness& f, std::chrono::steady_clock::time_point now,
                    std::chrono::steady_clock::duration refresh_every) {
  if (f.literal) return false;
  if (!f.resolved || f.all_failed) return true;
  return now - f.resolved_at >= refresh_every;
}

std::vector<boost::asio::ip::tcp::endpoint> unique_endpoints(std::vector<boost::asio::ip::tcp::endpoint> found) {
  std::vector<boost::asio::ip::tcp::endpoint> out;
  out.reserve(found.size());
  for (auto& ep : found)
    if (std::find(out.begin(), out.end(), ep) == out.end()) out.push_back(std::move(ep));
  return out;
}

}  // namespace dibs::http
