#include "api_flags.hpp"

#include "duration_flag.hpp"
#include "flag_names.hpp"
#include "price_flag.hpp"
#include "secret_file.hpp"

#include "adapters/http/processor/prefetched_answers.hpp"
#include "adapters/http/reuse/answer_reuse.hpp"
#include <dibs/http/batch_processor.hpp>

#include "profiles/ipapi/ipapi_profile.hpp"
#include <dibs/http/http_processor.hpp>
#include "adapters/http/rate/shared_rate.hpp"
#include "adapters/http/rate/shared_tokens.hpp"
#include "adapters/http/rate/token_meter.hpp"
#include <adapters/stores/answer_sweep.hpp>
#include <adapters/stores/open_answer_store.hpp>
#include <adapters/stores/open_shared_rate.hpp>

#include <dibs/log.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_future.hpp>

#include <CLI/CLI.hpp>

#include <fstream>
#include <stdexcept>

namespace dibs::cli {

void api_flags::add_to(CLI::App& cmd, bool with_urls) {
  if (with_urls) {
    auto* u = cmd.add_option("--url", url, "URL template for one GET per document; {field} is replaced by the document's field, percent-encoded")->type_name("URL");
    auto* b = cmd.add_option("--batch-url", batch_url, "URL for one POST of up to --batch-size items: with --batch-body, its template; without, the keys as a JSON "
                             "array (ip-api: http://ip-api.com/batch)")->type_name("URL");
    auto* uf = cmd.add_option("--url-file", url_file,
                              "--url from the first line of this file, which only its owner may read (chmod 600): an API "
                              "key in the URL stays out of `ps` (else the variable DIBS_URL)")
                   ->type_name("FILE");
    auto* bf = cmd.add_option("--batch-url-file", batch_url_file,
                              "--batch-url from the first line of this file, which only its owner may read (else the "
                              "variable DIBS_BATCH_URL)")
                   ->type_name("FILE");
    const std::vector<CLI::Option*> sources{u, b, uf, bf};
    for (auto* one : sources)
      for (auto* other : sources)
        if (one != other) one->excludes(other);
    cmd.add_option("--batch-body", batch_body,
                   "with --batch-url: the batch's JSON body, its array that holds the item's {fields} written once per "
                   "item: '{\"model\": \"text-embedding-3-small\", \"input\": [{text}]}'")
        ->type_name("JSON");
    cmd.add_option("--batch-item", batch_item,
                   "with --batch-body: where item i's answer stands in the batch's answer, a JSON Pointer with {i} "
                   "('/data/{i}': OpenAI's embeddings); a wrong count, or an \"index\" member not each item's once, "
                   "retries the whole batch")
        ->type_name("POINTER")
        ->capture_default_str();
    cmd.add_option("--batch-echo", batch_echo,
                   "with --batch-body: the member of each item's answer that names the item's key (its --source, "
                   "the template's first field by default): an answer naming another is not that item's, and it is "
                   "asked again (ip-api's batch: query)")
        ->type_name("MEMBER");
    cmd.add_option("--batch-key", batch_key, "ip-api's batch (--batch-url without --batch-body): the document field sent as the key (default: the source field)")->type_name("FIELD");
    request.add_to(cmd, "The request");
    answer.add_to(cmd, "What an answer means");
    budget.add_to(cmd, "How many calls");
  }
  cmd.add_option("--batch-size", batch_size,
                 "rows per batch request (ip-api allows 100); with --batch-body and not given, batches start at 100 and, "
                 "once requests are scarce (the API queues or refuses them, or a rate holds them), grow to as many as "
                 "400 while the API takes each whole (a size the API refuses is learned and kept)")
      ->type_name("N")
      ->each([this](const std::string&) { batch_size_given = true; })
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000}))
      ->capture_default_str();
  cmd.add_option("--batch-bytes", batch_bytes, "with --batch-body: a batch closes before its body passes this size")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("1MiB");
  cmd.add_option("--batch-linger", batch_linger, "how long a batch waits for more keys before it is sent")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--rate", rate, "at most this many API requests, N/s or N/min, for the whole process (or, with --rate-scope store, for every process on the store)")->type_name("N/s|N/min");
  cmd.add_option("--token-rate", token_rate,
                 "at most this many tokens, N/min, for an LLM API that meters tokens: each request waits until the "
                 "limit holds its max_tokens and its prompt's estimate, and gives back what its answer's usage did not "
                 "use (without it, the limit the API's headers state: OpenAI's x-ratelimit-*-tokens, Anthropic's)")
      ->type_name("N/min");
  if (with_urls)
    cmd.add_option("--price", price,
                   "what an LLM API's tokens cost, input and output, a price per million tokens (/1K per thousand): "
                   "'input=0.15/1M,output=0.60/1M' ('input=0.02/1M' alone for embeddings); the run's cost, from its "
                   "answers' usage, is in the summary, /status, /metrics and the dashboard")
        ->type_name("input=P/1M,output=P/1M");
  if (with_urls)  // `demo` runs one process on its own store
    cmd.add_option("--rate-scope", rate_scope,
                   "process: --rate and --token-rate are this process's; store: every process on the store shares them, kept in the store (SQL: table dibs_rate; MongoDB: collection dibs_rate)")
        ->type_name("process|store")
        ->check(CLI::IsMember({"process", "store"}))
        ->capture_default_str();
  cmd.add_option("--connect-timeout", connect_timeout, "HTTP connect (and TLS handshake) timeout")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--request-timeout", request_timeout, "HTTP timeout for a whole call")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--idle-timeout", idle_timeout,
                 "a kept-alive connection idle this long is closed, not reused (below the API's own keep-alive timeout; 0 = no reuse)")->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--max-retry-after", max_retry_after,
                 "the longest wait an API's Retry-After or X-Ttl is honored for (longer ones are cut to it, with a warning)")->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--max-connections", max_connections,
                 "at most N connections open to the API for the whole process; pipelines beyond them wait for one, "
                 "first come first served (0 = no limit: one per pipeline at most)")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1'000'000}))
      ->capture_default_str();
  cmd.add_flag("--fixed-concurrency", fixed_concurrency,
               "send as many calls at once as --concurrency says, from the start, instead of finding the API's best "
               "number below it (by default dibs starts with a few, grows while answers come back as fast, and backs "
               "off on 429/503, timeouts, refused connections or slower answers)");
  cmd.add_option("--max-body", max_body, "largest API answer accepted, in bytes")->type_name("BYTES")->capture_default_str();
  cmd.add_option("--max-source-bytes", max_source_bytes,
                 "longest value of an item's field sent to the API (2KiB, 16KiB, ...): an item whose value is longer "
                 "fails, with the reason, and the run goes on")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("2KiB; 256KiB with --body or --batch-body");
  cmd.add_option("--backoff-base", backoff_base, "first retry delay cap; doubles per attempt (full jitter)")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--backoff-max", backoff_max, "largest retry delay")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--ca-file", ca_file, "PEM file of CAs to trust for https (default: the system's)")->type_name("FILE");
  cmd.add_flag("--insecure", insecure, "https without certificate or host-name verification (warned about)");
  cmd.add_option("--reuse-answers", reuse_answers,
                 "documents whose request is identical share one API call: calls in flight are joined, answers kept "
                 "in this process's cache (--answer-ttl, --answer-cache-entries, --answer-cache-bytes); with 'store', "
                 "also in the store's dibs_answers, for every process and the next run")
      ->type_name("[memory|store]")
      ->expected(0, 1)
      ->default_str("memory")  // what a bare --reuse-answers means
      ->check(CLI::IsMember({"memory", "store"}));
  cmd.add_option("--answer-ttl", answer_ttl, "with --reuse-answers: how long an answer is used again")->type_name("DURATION")->capture_default_str();
  cmd.add_option("--answer-expiry", answer_expiry,
                 "with --reuse-answers store: when the run starts, remove the answers the store kept longer ago than "
                 "this (7d, 30d; by the store's clock), for every run on it (none by default: dibs_answers keeps them)")
      ->type_name("DURATION");
  cmd.add_option("--answer-cache-entries", answer_cache_entries, "with --reuse-answers: most answers kept (0: only join calls in flight)")
      ->type_name("N")->capture_default_str();
  cmd.add_option("--answer-cache-bytes", answer_cache_bytes, "with --reuse-answers: most bytes of answers kept (64MiB, 1GB, ...)")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("64MiB");
  auto* fails = cmd.add_flag("--no-data-fails", no_data_fails,
                             "fail items whose answer says the API has no data for them ({\"status\":\"fail\"}, ip-api's "
                             "\"private range\"); by default that answer is written as the item's result, counted as no_data, "
                             "and is no failure for the exit code");
  cmd.add_flag("--no-traceparent", no_traceparent,
               "in a traced run (--otlp-endpoint), send no W3C traceparent header with the API calls (by default each "
               "call names its span, so an API that traces joins the item's trace)");
  cmd.add_flag("--no-status-check", no_status_check,
               "read no \"status\" in answers: {\"status\":\"fail\"} is written as data, not counted as no_data")
      ->excludes(fails);
}

void api_flags::read_url_sources() {
  if (!url_file.empty()) url = read_secret_file(url_file, "--url-file");
  if (!batch_url_file.empty()) batch_url = read_secret_file(batch_url_file, "--batch-url-file");
  if (!batch_body.empty() && !url.empty())
    throw std::invalid_argument("--batch-body goes with --batch-url (the batch's URL); --url sends one item a request "
                                "(its body: --body)");
  if (!url.empty() || !batch_url.empty()) return;  // the environment yields to a flag without a word
  auto from_env = secret_from_env("DIBS_URL");
  auto batch_from_env = secret_from_env("DIBS_BATCH_URL");
  if (from_env && batch_from_env)
    throw std::invalid_argument("DIBS_URL and DIBS_BATCH_URL are both set: give one (or a flag)");
  if (from_env) url = std::move(*from_env);
  if (batch_from_env) batch_url = std::move(*batch_from_env);
}

std::shared_ptr<http::rate_limiter> api_flags::limiter() const {
  if (!limiter_) limiter_ = make_limiter(rate, token_rate);
  return limiter_;
}

http::processor_options api_flags::call() const {
  const auto& f = *this;
  http::processor_options o;
  o.url = http::url_template::parse(batch() ? batch_url : url, url_flag());
  if (f.max_source_bytes == 0) throw std::invalid_argument("--max-source-bytes must be more than 0");
  const bool into_body = !f.batch_body.empty() || !f.request.body.empty();
  o.url.set_max_value_bytes(f.max_source_bytes != unset_size ? f.max_source_bytes
                            : into_body                      ? default_body_value_bytes
                                                             : http::default_max_value_bytes);
  o.shape = shape();
  o.http.connect_timeout = duration_flag("--connect-timeout", f.connect_timeout);
  o.http.request_timeout = duration_flag("--request-timeout", f.request_timeout);
  o.http.idle_timeout = duration_flag("--idle-timeout", f.idle_timeout);
  o.max_retry_after = duration_flag("--max-retry-after", f.max_retry_after);
  if (o.max_retry_after.count() <= 0) throw std::invalid_argument("--max-retry-after must be more than 0");
  o.http.max_body = f.max_body;
  o.http.tls.ca_file = f.ca_file;
  o.http.tls.insecure = f.insecure;
  o.traceparent = !f.no_traceparent;
  o.backoff_base = duration_flag("--backoff-base", f.backoff_base);
  o.backoff_max = duration_flag("--backoff-max", f.backoff_max);
  if (o.backoff_max < o.backoff_base) throw std::invalid_argument("--backoff-max must not be below --backoff-base");
  o.status_field_check = !f.no_status_check;
  o.no_data_fails = f.no_data_fails;
  o.no_data = answer.no_data();
  o.map = answer.answer_map();
  o.expect_json = answer.expect_json_pointer();
  if (!price.empty()) o.price = parse_prices(price);
  o.budgets = budget.budgets();
  o.spend_budgets = budget.spend_budgets();
  if (!o.spend_budgets.empty() && o.price.input <= 0 && o.price.output <= 0)
    throw std::invalid_argument("--budget " + budget.budget + " counts dollars at --price: give --price too (like --price "
                                "'input=0.15/1M,output=0.60/1M')");
  // A body that asks for output tokens pays for them: without their price the budget would count
  // them as free.
  if (!o.spend_budgets.empty() && o.price.output <= 0)
    for (const char* asks : {"max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"})
      if (request.body.find(asks) != std::string::npos)
        throw std::invalid_argument("--budget " + budget.budget + ": --price gives no output price, and the body asks for "
                                    "output tokens (" + asks + "): give output=P/1M too");
  o.max_connections = f.max_connections;
  o.shards = f.shards;
  if (f.fixed_concurrency) o.adaptive.reset();
  if (f.rate_scope == "store" && f.rate.empty() && f.token_rate.empty())
    throw std::invalid_argument(
        "--rate-scope store shares --rate and --token-rate: give one of them too (like --rate 45/min or --token-rate 150000/min)");
  o.limiter = limiter();
  if (!f.reuse_answers.empty() && !reuse_) {
    http::answer_cache_limits limits;
    limits.ttl = duration_flag("--answer-ttl", f.answer_ttl);
    if (limits.ttl.count() <= 0) throw std::invalid_argument("--answer-ttl must be more than 0");
    limits.max_entries = f.answer_cache_entries;
    limits.max_bytes = f.answer_cache_bytes;
    reuse_ = std::make_shared<http::answer_reuse>(limits);
  }
  o.reuse = reuse_;
  if (!prefetched_) prefetched_ = std::make_shared<http::prefetched_answers>();
  o.prefetched = prefetched_;
  o.account_spent = [account = account_](const std::string& why) {
    std::function<void()> stop;
    {
      std::lock_guard lock(account->mutex);
      if (!account->stop) return false;  // no run to stop (a demo, the pre-flight): the item fails
      if (!account->why.empty()) return true;  // said once; the run is stopping already
      account->why = why;
      stop = account->stop;
    }
    log::warn("the API says ", why, "; the run stops claiming");
    stop();
    return true;
  };
  if (f.insecure && !f.ca_file.empty()) throw std::invalid_argument("--insecure and --ca-file contradict each other");
  if (!f.ca_file.empty() && !std::ifstream(f.ca_file))
    throw std::invalid_argument("--ca-file '" + f.ca_file + "': cannot be read");
  return o;
}

void api_flags::fit_shards(engine_config& cfg) {
  if (max_connections > 0 && cfg.effective_shards() > max_connections) cfg.shards = max_connections;
  shards = cfg.effective_shards();
}

processor_factory api_flags::factory(const std::string& source_field) const {
  if (url.empty() && batch_url.empty())
    throw std::invalid_argument("give --url (one key per request) or --batch-url (or --url-file, --batch-url-file)");
  auto call = this->call();
  if (insecure && call.url.scheme() == "https")
    log::warn("--insecure: the API's certificate and host name are NOT verified; anyone on the path can read and change its answers");
  if (!batch()) return http::make_http_processor_factory(std::move(call));
  auto b = batch_options(source_field, std::move(call));
  try {
    return http::make_batch_processor_factory(std::move(b));
  } catch (const setting_error& e) {
    throw std::invalid_argument(in_flag_words(e));  // the library names its settings, we our flags
  }
}

http::batch_processor_options api_flags::batch_options(const std::string& source_field, http::processor_options call) const {
  if (!request.body.empty())
    throw std::invalid_argument("--body is one item's request body: with --batch-url, give the batch's as --batch-body "
                                "(its array that holds the {fields} is written once per item)");
  if (!reuse_answers.empty())
    throw std::invalid_argument("--reuse-answers works with --url (one request per document), not with --batch-url");
  if (!call.spend_budgets.empty())
    throw std::invalid_argument("--budget " + budget.budget + " (in money) works with --url (one request per document), not "
                                "with --batch-url yet: --budget N/day counts a batch's calls");
  http::batch_processor_options b;
  b.call = std::move(call);
  b.key_field = batch_key.empty() ? source_field : batch_key;
  b.batch_size = batch_size;
  b.linger = duration_flag("--batch-linger", batch_linger);
  auto shape = batch_request(source_field);  // checked here, in the flags' words
  if (!shape.ipapi) {  // else the library's own ip-api profile
    b.body = std::move(shape.body);
    b.item = std::move(shape.item);
    b.echo = std::move(shape.echo);
    b.max_bytes = batch_bytes;
    // An API that serves one request at a time pays its fixed cost a request less often in larger
    // batches (a serial embeddings server: 0.82 of the best fixed size at 100 rows, 256 best).
    if (!batch_size_given) b.grow_to = batch_size * batch_grow_factor;
  }
  return b;
}

api_flags::batch_shape api_flags::batch_request(const std::string& source_field) const {
  batch_shape shape;
  if (batch_body.empty()) {  // ip-api's batch: its profile of the template
    if (batch_item != "/{i}" || !batch_echo.empty())
      throw std::invalid_argument(std::string(batch_item != "/{i}" ? "--batch-item" : "--batch-echo") +
                                  " goes with --batch-body (ip-api's batch answers in order, checked by \"query\")");
    const auto key = batch_key.empty() ? source_field : batch_key;
    shape.body = http::batch_body::parse(http::ipapi::batch_body(key), "--batch-key");
    shape.item = http::ipapi::batch_item;
    shape.echo = http::ipapi::batch_echo;
    shape.ipapi = true;
    return shape;
  }
  if (!batch_key.empty())
    throw std::invalid_argument("--batch-key is ip-api's batch's key: with --batch-body, the template's {fields} are what "
                                "each row sends, and --source (its first field by default) the key --batch-echo compares");
  shape.body = http::batch_body::parse(batch_body, "--batch-body");
  shape.item = batch_item;
  shape.echo = batch_echo;
  return shape;
}

void api_flags::share_rate(const std::shared_ptr<admin_store>& st) const {
  if (rate_scope != "store") return;
  auto call = this->call();  // the limiter from --rate and --token-rate, validated
  shared_rate_opening opened;
  try {
    opened = open_shared_rate(st);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("--rate-scope store: the store can't keep the shared rate (table dibs_rate): ") + e.what());
  }
  const auto given = rate.empty() ? "--token-rate " + token_rate : token_rate.empty() ? "--rate " + rate : "--rate " + rate + " and --token-rate " + token_rate;
  if (!opened.record) {
    if (opened.expected) log::info("--rate-scope store: ", opened.none_because, ": ", given, " is this process's");
    else log::warn("--rate-scope store: ", opened.none_because, ": ", given, " is this process's only");
    return;
  }
  const auto origin = origin_text();
  if (!rate.empty()) {
    auto shared = std::make_shared<http::shared_rate>(opened.record, origin, call.limiter->per_second(), std::chrono::seconds(1),
                                                      call.max_retry_after);
    log::info("--rate-scope store: --rate ", rate, " shared by every process on the store for ", origin, ", in blocks of ",
              shared->block());
    call.limiter->share(std::move(shared));
  }
  if (!token_rate.empty()) {
    // A schedule of its own in the same record table: one slot a token, under the origin's name
    // and " tokens" (the request rate's record is the origin's), saving up a minute of them as
    // the API's own bucket does.
    const auto per_minute = call.limiter->tokens().per_minute();
    const auto per_slot = http::shared_tokens::tokens_per_slot(per_minute);
    auto schedule = std::make_shared<http::shared_rate>(opened.record, origin + " tokens", per_minute / 60 / per_slot,
                                                        std::chrono::seconds(1), call.max_retry_after, std::chrono::minutes(1));
    log::info("--rate-scope store: --token-rate ", token_rate, " shared by every process on the store for ", origin,
              ", in blocks of ", static_cast<std::uint64_t>(schedule->block()) * per_slot, " tokens");
    call.limiter->share_tokens(std::make_shared<http::shared_tokens>(std::move(schedule), per_slot));
  }
}

std::string api_flags::origin_text() const {
  const auto o = http::url_template::parse(batch() ? batch_url : url, url_flag()).origin();
  return std::string(o.tls ? "https://" : "http://") + o.host + ":" + std::to_string(o.port);
}

void api_flags::share_answers(const std::shared_ptr<admin_store>& st) const {
  if (!answer_expiry.empty() && reuse_answers != "store")
    throw std::invalid_argument("--answer-expiry " + answer_expiry + " goes with --reuse-answers store (the answers the store keeps)");
  if (reuse_answers != "store" || !reuse_) return;
  std::shared_ptr<answer_store> kept;
  try {
    kept = open_answer_store(st);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("--reuse-answers store: the store can't keep answers (table dibs_answers): ") +
                                e.what());
  }
  if (!kept) {
    log::info("--reuse-answers store: this store keeps no answers (a file or the demo's memory has one process): "
              "they are kept in this process only");
    return;
  }
  if (!answer_expiry.empty()) {
    const auto expiry = duration_flag("--answer-expiry", answer_expiry);
    if (expiry < duration_flag("--answer-ttl", answer_ttl))
      throw std::invalid_argument("--answer-expiry " + answer_expiry + " is shorter than --answer-ttl " + answer_ttl +
                                  ": answers this run would use would go");
    try {
      const auto removed = remove_expired_answers(st, expiry);
      log::info("--answer-expiry ", answer_expiry, ": ", removed.value_or(0), " answers kept longer ago removed from dibs_answers");
    } catch (const std::exception& e) {  // the run goes on: a table that grows is no item's failure
      log::warn("--answer-expiry ", answer_expiry, ": the store's old answers could not be removed: ", e.what());
    }
  }
  reuse_->store_in(std::make_shared<http::stored_answers>(std::move(kept), duration_flag("--answer-ttl", answer_ttl)));
  log::info("--reuse-answers store: answers kept in the store's dibs_answers for ", answer_ttl, ", for every process and the next run");
}

std::string api_flags::check_tls() const {
  auto call = this->call();
  if (call.url.scheme() != "https" || insecure) return {};
  net::io_context ioc(1);
  http::client c(ioc.get_executor(), call.http);
  auto fut = net::co_spawn(ioc, c.probe(call.url.origin()), net::use_future);
  ioc.run();
  const auto r = fut.get();
  // Only a refused certificate (or an unusable CA file) is fatal; an API that is down now may be
  // up later, and the run retries it.
  const bool tls_refusal =
      r.stage == "tls setup" || !r.detail.empty() || r.ec.category() == net::error::get_ssl_category();
  return r.ec && tls_refusal ? r.describe() : std::string{};
}

void api_flags::on_account_spent(std::function<void()> stop) const {
  std::lock_guard lock(account_->mutex);
  account_->stop = std::move(stop);
}

std::string api_flags::account_spent_why() const {
  std::lock_guard lock(account_->mutex);
  return account_->why;
}

}  // namespace dibs::cli
