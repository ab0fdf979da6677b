#include "input_digest.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

namespace dibs::jsonl {

std::string input_prefix_sha256(const std::string& path, std::uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return {};
  std::vector<char> chunk(1 << 20);
  for (std::uint64_t left = size; left > 0;) {
    const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(left, chunk.size()));
    in.read(chunk.data(), want);
    if (in.gcount() != want) return {};  // shorter than `size`
    if (EVP_DigestUpdate(ctx.get(), chunk.data(), static_cast<std::size_t>(want)) != 1) return {};
    left -= static_cast<std::uint64_t>(want);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &n) != 1) return {};
  std::string hex(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) std::snprintf(&hex[2 * i], 3, "%02x", digest[i]);
  return hex;
}

}  // namespace dibs::jsonl
