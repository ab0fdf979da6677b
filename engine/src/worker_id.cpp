#include "worker_id.hpp"

#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <stdexcept>

namespace dibs {

std::string worker_id_problem(std::string_view name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > max_worker_id_chars)
    return "must be at most " + std::to_string(max_worker_id_chars) + " characters (it has " + std::to_string(name.size()) + ")";
  for (unsigned char c : name)
    if (c <= 0x20 || c >= 0x7f) return "must be printable ASCII without spaces (letters, digits, - . _ ...)";
  return {};
}

void require_worker_id(const std::string& name) {
  if (const auto problem = worker_id_problem(name); !problem.empty())
    throw std::invalid_argument("worker '" + name + "': " + problem);
}

bool worker_owns(std::string_view by, std::string_view name) {
  if (name.empty()) return false;
  if (by == name) return true;
  if (by.size() < name.size() + 2 || by.substr(0, name.size()) != name || by[name.size()] != '-') return false;
  const auto rest = by.substr(name.size() + 1);
  return std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
}

std::string default_worker_prefix() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "host");
  return std::string(host) + "-" + std::to_string(::getpid());
}

}  // namespace dibs
