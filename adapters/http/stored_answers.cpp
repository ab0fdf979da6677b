#include "stored_answers.hpp"

#include <dibs/log.hpp>

#include <openssl/evp.h>

#include <cstdio>

namespace dibs::http {

namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

answer_key stored_answer_key(const std::string& request_key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(request_key.data(), request_key.size(), digest, &n, EVP_sha256(), nullptr);
  std::string hex(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) std::snprintf(&hex[2 * i], 3, "%02x", digest[i]);
  return {std::move(hex), request_key};
}

stored_answers::stored_answers(std::shared_ptr<answer_store> store, std::chrono::milliseconds ttl,
                               std::chrono::milliseconds pause_after_error, std::size_t max_queued)
    : store_(std::move(store)), ttl_(ttl), pause_after_error_(pause_after_error), max_queued_(max_queued) {}

stored_answers::~stored_answers() { pool_.join(); }

bool stored_answers::resting() const {
  const auto until = rest_until_ns_.load(std::memory_order_relaxed);
  return until != 0 && now_ns() < until;
}

void stored_answers::failed(const char* doing, const std::exception& e) {
  figures_.errors.fetch_add(1, std::memory_order_relaxed);
  const auto until = now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(pause_after_error_).count();
  // Said once per rest, not once per call.
  if (rest_until_ns_.exchange(until) < now_ns())
    log::warn("--reuse-answers store: can't ", doing, " an answer in the store (", e.what(), "); the API is asked ",
              "without it for ", pause_after_error_.count() / 1000.0, " s");
}

awaitable<std::optional<std::string>> stored_answers::find(const std::string& request_key) {
  if (resting()) {
    figures_.missed.fetch_add(1, std::memory_order_relaxed);
    co_return std::nullopt;
  }
  // Named, not a temporary in the co_await: g++ 12 destroys such a temporary twice.
  auto look = [this, k = stored_answer_key(request_key)]() -> std::optional<std::string> {
    try {
      return store_->find(k, ttl_);
    } catch (const std::exception& e) {
      failed("read", e);
      return std::nullopt;
    }
  };
  auto found = co_await offload(pool_, std::move(look));
  (found ? figures_.found : figures_.missed).fetch_add(1, std::memory_order_relaxed);
  co_return found;
}

void stored_answers::keep(const std::string& request_key, std::string answer) {
  if (answer.size() > max_answer_bytes) {
    figures_.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (resting() || queued_.fetch_add(1) >= max_queued_) {
    queued_.fetch_sub(1);
    figures_.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  net::post(pool_.executor(), [this, k = stored_answer_key(request_key), a = std::move(answer)] {
    try {
      if (resting()) {
        figures_.dropped.fetch_add(1, std::memory_order_relaxed);
      } else {
        store_->keep(k, a);
        figures_.kept.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (const std::exception& e) {
      failed("keep", e);
      figures_.dropped.fetch_add(1, std::memory_order_relaxed);
    }
    queued_.fetch_sub(1);
  });
}

}  // namespace dibs::http
