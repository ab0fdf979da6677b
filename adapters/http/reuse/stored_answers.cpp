#include "stored_answers.hpp"

#include <dibs/log.hpp>
#include <dibs/setting_error.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

namespace dibs::http {

namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::int64_t ns(std::chrono::milliseconds d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }
}  // namespace

answer_key stored_answer_key(const std::string& request_key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  // Every request sharing one record would hand each document another's answer: no digest, no key.
  if (EVP_Digest(request_key.data(), request_key.size(), digest, &n, EVP_sha256(), nullptr) != 1 || n != 32)
    throw std::runtime_error("SHA-256 of the request failed");
  std::string hex(2 * n, '0');
  for (unsigned int i = 0; i < n; ++i) std::snprintf(&hex[2 * i], 3, "%02x", digest[i]);
  const auto query = request_key.find('?');
  return {std::move(hex), query == std::string::npos ? request_key : request_key.substr(0, query) + "?..."};
}

stored_answers::stored_answers(std::shared_ptr<answer_store> store, std::chrono::milliseconds ttl,
                               stored_answer_limits limits)
    : store_(std::move(store)), ttl_(ttl), limits_(limits) {}

stored_answers::~stored_answers() {
  close_by_ns_ = now_ns() + ns(limits_.close_within);
  finds_.join();
  keep_lane_.join();
}

bool stored_answers::resting() const {
  const auto until = rest_until_ns_.load(std::memory_order_relaxed);
  return until != 0 && now_ns() < until;
}

void stored_answers::failed(const char* doing, const std::exception& e) {
  // The rest first, then the count: whoever sees the error counted sees the store resting.
  const bool was_resting = rest_until_ns_.exchange(now_ns() + ns(limits_.pause_after_error)) >= now_ns();
  figures_.errors.fetch_add(1, std::memory_order_relaxed);
  // Said once per rest, not once per call.
  if (!was_resting)
    log::warn(setting_name("reuse_answers"), " store: can't ", doing, " an answer in the store (", e.what(), "); the API is asked ",
              "without it for ", limits_.pause_after_error.count() / 1000.0, " s");
}

std::optional<answer_key> stored_answers::key_for(const std::string& request_key) {
  try {
    return stored_answer_key(request_key);
  } catch (const std::exception& e) {
    failed("look up", e);
    return std::nullopt;
  }
}

awaitable<std::optional<kept_answer>> stored_answers::find(answer_key k) {
  if (resting()) {
    figures_.missed.fetch_add(1, std::memory_order_relaxed);
    co_return std::nullopt;
  }
  if (finds_queued_.fetch_add(1) >= limits_.max_queued) {
    finds_queued_.fetch_sub(1);
    figures_.missed.fetch_add(1, std::memory_order_relaxed);
    co_return std::nullopt;
  }
  // Named, not a temporary in the co_await: g++ 12 destroys such a temporary twice.
  auto look = [this, k = std::move(k)]() -> std::optional<kept_answer> {
    struct done_guard {
      std::atomic<std::size_t>& n;
      ~done_guard() { n.fetch_sub(1); }
    } done{finds_queued_};
    // A call queued before a failure need not wait on it, nor one queued before the close.
    if (resting() || close_by_ns_.load() != 0) return std::nullopt;
    try {
      return store_->find(k, ttl_);
    } catch (const std::exception& e) {
      failed("read", e);
      return std::nullopt;
    }
  };
  auto found = co_await offload(finds_, std::move(look));
  (found ? figures_.found : figures_.missed).fetch_add(1, std::memory_order_relaxed);
  co_return found;
}

std::size_t stored_answers::queued_keeps() const {
  std::lock_guard lock(keeps_mutex_);
  return keeps_.size();
}

void stored_answers::keep(answer_key k, std::string answer) {
  auto drop = [this] { figures_.dropped.fetch_add(1, std::memory_order_relaxed); };
  if (answer.size() > max_answer_bytes || resting()) return drop();
  {
    std::lock_guard lock(keeps_mutex_);
    if (keeps_.size() >= limits_.max_queued) return drop();
    keeps_.emplace_back(std::move(k), std::move(answer));
    if (writing_) return;  // the running write takes it with the next batch
    writing_ = true;
  }
  net::post(keep_lane_.executor(), [this] { write_keeps(); });
}

void stored_answers::write_keeps() {
  for (;;) {
    std::vector<std::pair<answer_key, std::string>> batch;
    {
      std::lock_guard lock(keeps_mutex_);
      std::size_t n = 0, bytes = 0;
      while (n < keeps_.size() && n < limits_.keep_batch && (n == 0 || bytes + keeps_[n].second.size() <= limits_.keep_batch_bytes))
        bytes += keeps_[n++].second.size();
      if (n == 0) {
        writing_ = false;
        return;
      }
      batch.assign(std::make_move_iterator(keeps_.begin()), std::make_move_iterator(keeps_.begin() + n));
      keeps_.erase(keeps_.begin(), keeps_.begin() + n);
    }
    const auto closing = close_by_ns_.load();
    if (resting() || (closing != 0 && now_ns() > closing)) {
      figures_.dropped.fetch_add(batch.size(), std::memory_order_relaxed);
      continue;
    }
    // One record per request: the last answer for a key wins (one statement may not touch a row
    // twice on PostgreSQL).
    std::vector<std::pair<answer_key, std::string>> records;
    std::unordered_map<std::string, std::size_t> at;
    try {
      for (auto& [k, answer] : batch) {
        if (auto it = at.find(k.digest); it != at.end()) {
          records[it->second].second = std::move(answer);
          figures_.dropped.fetch_add(1, std::memory_order_relaxed);  // replaced before it was written
          continue;
        }
        at.emplace(k.digest, records.size());
        records.emplace_back(std::move(k), std::move(answer));
      }
      // In key order: two processes keeping overlapping batches then lock their rows in the same
      // order, and never deadlock.
      std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first.digest < b.first.digest; });
      store_->keep(records);
      figures_.kept.fetch_add(records.size(), std::memory_order_relaxed);
    } catch (const std::exception& e) {
      figures_.dropped.fetch_add(records.size(), std::memory_order_relaxed);
      failed("keep", e);
    }
  }
}

}  // namespace dibs::http
