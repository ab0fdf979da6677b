// IPv4 special-purpose ranges (RFC 6890), as a geolocation API sees them: private addresses have
// no location, reserved ones neither. Used by the seeder (public addresses only) and the stub.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace dibs {

enum class ipv4_range { public_, private_, reserved };

ipv4_range classify_ipv4(std::uint32_t addr);
std::string ipv4_to_string(std::uint32_t addr);
// Parses dotted-quad text strictly (four decimal parts 0..255, no leading junk).
bool parse_ipv4(const std::string& text, std::uint32_t& out);
// A uniformly random public address.
std::uint32_t random_public_ipv4(std::mt19937_64& rng);

}  // namespace dibs
