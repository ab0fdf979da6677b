// The flags that say how the API is called, shared by `demo` and `enrich`: one key per request
// (`--url`) or many (`--batch-url`, `--batch-size`), the request rate, timeouts, backoff, body
// cap, TLS; and the processor factory they make.
#pragma once

#include <dibs/http/batch_body.hpp>
#include <dibs/http/batch_processor.hpp>
#include <dibs/http/http_processor.hpp>
#include <dibs/http/rate_limiter.hpp>

#include "answer_flags.hpp"
#include "budget_flags.hpp"
#include "request_flags.hpp"

#include <dibs/engine_config.hpp>
#include <dibs/processor.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace dibs {
class admin_store;
}

namespace dibs::cli {

// A batch template's batches grow from --batch-size (not given) to this many times it. Not 8:
// against a server of 4 slots (llama.cpp's) batches of 800 made a run's last wave of requests
// uneven, 0.86 of the best fixed size (400: 1.01); a serial one (Ollama's) gains little past 400.
inline constexpr std::size_t batch_grow_factor = 4;

struct api_flags {
  std::string url;        // GET per item, {field} expanded
  std::string batch_url;  // POST per batch
  // The same from a file only its owner can read, so that `ps` does not show an API key in the
  // URL (secret_file.hpp); else from the environment: DIBS_URL, DIBS_BATCH_URL.
  std::string url_file, batch_url_file;
  std::size_t batch_size = 100;
  // --batch-size was given: batches stay at that size (else a template's grow, batch_grow_factor).
  bool batch_size_given = false;
  std::string batch_key;  // "" = the store's source field
  std::string batch_linger = "20ms";
  std::string batch_body;           // --batch-body: a template whose array is written once per item
  std::string batch_item = "/{i}";  // --batch-item: where item i's answer stands in the batch's
  std::string batch_echo;           // --batch-echo: the member of an item's answer naming its key
  std::size_t batch_bytes = 1u << 20;
  std::string rate;
  std::string token_rate;  // --token-rate: the tokens a minute an LLM API allows
  std::string price;       // --price input=0.15/1M,output=0.60/1M
  std::string rate_scope = "process";  // or "store": every process on the store shares --rate
  std::string connect_timeout = "5s";
  std::string request_timeout = "30s";
  std::string idle_timeout = "4s";
  std::string max_retry_after = "1h";
  std::size_t max_body = 1 << 20;
  // --max-source-bytes; unset: 2 KiB into a URL, 256 KiB into a body (a passage to embed, a prompt)
  std::size_t max_source_bytes = unset_size;
  static constexpr std::size_t unset_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t default_body_value_bytes = 256u << 10;
  std::string backoff_base = "500ms";
  std::string backoff_max = "30s";
  std::string ca_file;
  bool insecure = false;
  bool no_status_check = false;
  bool no_data_fails = false;
  bool no_traceparent = false;  // --no-traceparent: traced runs' calls carry no traceparent header
  // Answer reuse (adapters/http/reuse/answer_reuse.hpp): "" off, "memory" in this process.
  std::string reuse_answers;
  std::string answer_ttl = "1h";
  std::string answer_expiry;  // --answer-expiry: "" keeps the store's answers until someone removes them
  std::size_t answer_cache_entries = 100'000;
  std::size_t answer_cache_bytes = 64u << 20;
  std::size_t max_connections = 0;  // --max-connections; 0 = one per pipeline at most
  bool fixed_concurrency = false;   // --fixed-concurrency: no adaptive limit, --concurrency calls at once
  std::size_t shards = 1;           // the run's shards, which share --max-connections (fit_shards)
  request_flags request;            // --header, --method, --body (enrich only)
  answer_flags answer;              // --no-data-on, --no-data-when (enrich only)
  budget_flags budget;              // --max-calls, --budget (enrich only)

  // `with_urls`: the command takes --url/--batch-url from the user (demo sets its own).
  void add_to(CLI::App& cmd, bool with_urls);
  // Sets `url` or `batch_url` from --url-file, --batch-url-file, or (when no flag gives a URL)
  // DIBS_URL or DIBS_BATCH_URL. Call first, before anything reads them; throws
  // std::invalid_argument naming the flag or variable.
  void read_url_sources();
  // The processor for every shard, validated; throws std::invalid_argument naming the flag.
  // `source_field` is the batch key when --batch-key is not given.
  processor_factory factory(const std::string& source_field) const;
  // The batch processor's options from the flags and `call` (this->call(), or a copy of it);
  // throws std::invalid_argument naming the flag.
  http::batch_processor_options batch_options(const std::string& source_field, http::processor_options call) const;
  // The batch's request and answer shape: --batch-body, --batch-item and --batch-echo, or, with no
  // --batch-body, ip-api's batch (`[{key}]`, "/{i}", "query"); throws std::invalid_argument.
  struct batch_shape {
    http::batch_body body;
    std::string item, echo;
    bool ipapi = false;
  };
  batch_shape batch_request(const std::string& source_field) const;
  // With an https URL, one TLS handshake before the run: a certificate that will be refused
  // stops the command here, with the reason, instead of failing every document. "" when fine
  // (or when the API is merely unreachable now: the run retries that).
  std::string check_tls() const;
  // How the API is called (--url or --batch-url, timeouts, TLS, the limiter), validated; throws
  // std::invalid_argument naming the flag. Every call shares one limiter, so a request made
  // before the run (the pre-flight's) counts against --rate like the run's own.
  http::processor_options call() const;
  // --rate-scope store: the limiter takes its slots from the store's shared record from now on
  // (shared_rate.hpp); a store that keeps none (a file: one process) leaves the rate this
  // process's. Call once the store is open, before any request; throws std::invalid_argument.
  void share_rate(const std::shared_ptr<admin_store>& st) const;
  // With --reuse-answers store: answers kept in the store's dibs_answers too, for every process
  // and the next run. Call after factory() and before the run.
  void share_answers(const std::shared_ptr<admin_store>& st) const;
  // The --rate limiter every call shares (made once): the engine may change its rate while it
  // runs (POST /rate).
  std::shared_ptr<http::rate_limiter> limiter() const;
  bool batch() const { return !batch_url.empty(); }
  // --header, --method and --body parsed, their secrets read once; throws std::invalid_argument.
  const http::request_shape& shape() const {
    if (!shape_) shape_ = request.shape();
    return *shape_;
  }
  // Before factory(): --max-connections is split across the shards, each needing at least one
  // connection, so the run gets no more shards than connections; remembers the shard count.
  void fit_shards(engine_config& cfg);
  const char* url_flag() const { return batch() ? "--batch-url" : "--url"; }
  // The API's origin as the store's shared records name it: scheme://host:port.
  std::string origin_text() const;

  // The API said the account can make no more calls (a quota or spend cap spent: http_processor's
  // account_spent): `stop` is called once, from whichever shard heard it. account_spent_why()
  // says what the API said, "" when it never did.
  void on_account_spent(std::function<void()> stop) const;
  std::string account_spent_why() const;

 private:
  struct account_state {
    std::mutex mutex;
    std::string why;
    std::function<void()> stop;
  };
  std::shared_ptr<account_state> account_ = std::make_shared<account_state>();
  mutable std::shared_ptr<http::rate_limiter> limiter_;  // made once, from --rate
  mutable std::shared_ptr<http::answer_reuse> reuse_;   // made once, from --reuse-answers
  mutable std::shared_ptr<http::prefetched_answers> prefetched_;  // the pre-flight's answers, for the run
  mutable std::optional<http::request_shape> shape_;    // made once (its secrets read once)
};

}  // namespace dibs::cli
