// `dibs enrich`: the real job. Claims documents in a store, calls the API for each,
// writes the answer back under the claim, until nothing is pending or leased (or, with --follow,
// until interrupted).
#include "commands.hpp"
#include "end_line.hpp"
#include "exit_codes.hpp"
#include "help_groups.hpp"
#include "api_flags.hpp"
#include "dry_run.hpp"
#include "duration_flag.hpp"
#include "engine_flags.hpp"
#include "item_field.hpp"
#include "preflight.hpp"
#include "status_report.hpp"
#include "store_flags.hpp"

#include <dibs/engine.hpp>
#include <dibs/http/batch_body.hpp>
#include <dibs/stores/store_uri.hpp>
#include <dibs/log.hpp>
#include <dibs/missing_table_error.hpp>
#include <dibs/setting_error.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <thread>
#include <fstream>

namespace dibs::cli {
namespace {

// The store can drop a connection just as its counts are read (a database restarting, a reset
// link): the next try reconnects, so the counts are worth a few tries half a second apart. A
// refusal that no retry changes (a setting, a missing table) ends the tries at once.
struct counts_read {
  std::optional<store_stats> stats;
  std::string error;          // the last try's, when none succeeded
  std::exception_ptr thrown;  // ... as it was thrown (a setting_error keeps the user's flag names)
};

template <class Store>
counts_read read_counts(Store& st, int tries) {
  counts_read r;
  for (int attempt = 0; attempt < tries && !r.stats; ++attempt) {
    try {
      r.stats = st.stats_blocking();
    } catch (const std::exception& ex) {
      r.error = ex.what();
      r.thrown = std::current_exception();
      const bool lasting = dynamic_cast<const setting_error*>(&ex) || dynamic_cast<const missing_table_error*>(&ex);
      if (lasting) break;
      if (attempt + 1 < tries) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  return r;
}

}  // namespace

constexpr std::size_t default_batches_in_flight = 256;

command add_enrich_command(CLI::App& app) {
  auto* sub = app.add_subcommand("enrich", "Claim documents, call the API for each, write the answer back under the claim");
  struct flags {
    store_flags store;
    api_flags api;
    engine_flags run;
    std::string shutdown_timeout = "10s";
    bool follow = false;
    bool no_preflight = false;
    std::size_t dry_run = 0;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, true);
  f->api.add_to(*sub, true);
  f->run.add_to(*sub);
  sub->add_option("--shutdown-timeout", f->shutdown_timeout, "how long in-flight calls may finish after SIGINT/SIGTERM")
      ->type_name("DURATION")
      ->capture_default_str();
  sub->add_flag("--follow", f->follow, "keep going when nothing is pending: poll with backoff (10 ms up to 5 s)");
  sub->footer(
      "Examples:\n"
      "  dibs enrich --store 'mongodb://127.0.0.1:27017/test?collection=message' \\\n"
      "      --url 'http://127.0.0.1:8080/json/{originatingIp}' --rate 40/min\n"
      "  DIBS_STORE_PASSWORD=... dibs enrich --store 'mysql://app@db:3306/geo?table=jobs' \\\n"
      "      --batch-url http://ip-api.com/batch --lease 2m --summary-json -\n"
      "  cat in.jsonl | dibs enrich --store jsonl:- --out - --url 'http://127.0.0.1:8080/json/{originatingIp}' > out.jsonl\n"
      "Durations: 250ms, 1.5s, 2m, 1h (a bare number is seconds).");
  sub->add_flag("--no-preflight", f->no_preflight,
                "don't read one pending item and call the API once for it before claiming anything");
  sub->add_option("--dry-run", f->dry_run,
                  "read N pending items without claiming them, print the request each would get (secrets redacted), "
                  "call the API for those N (with --batch-url, one batch of at most --batch-size) and print the write each "
                  "answer would make; nothing is claimed or written")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000}));
  group_enrich_flags(*sub);

  return [f, sub] {
    f->api.read_url_sources();
    auto cfg = f->run.config();
    // A batch template's request carries --batch-size rows: by default the rows in flight are 256 requests'
    // worth (an embeddings API answers many batches at once), not 1,000 rows (10 requests); the
    // adaptive limit finds the API's best below that.
    // ip-api's batch (no --batch-body) keeps 1,000: its 15 requests a minute would hold 25,600
    // leased rows for a quarter of an hour.
    if (f->api.batch() && !f->api.batch_body.empty() && sub->count("--concurrency") == 0)
      cfg.concurrency = std::max(cfg.concurrency, f->api.batch_size * default_batches_in_flight);
    cfg.shutdown_timeout = duration_flag("--shutdown-timeout", f->shutdown_timeout);
    cfg.follow = f->follow;
    if (f->follow) cfg.idle_backoff_max = std::chrono::milliseconds(5'000);
    f->api.fit_shards(cfg);
    cfg.validate();
    f->store.shards = cfg.effective_shards();

    // The --url template says which field the store reads (item_field.hpp).
    if (f->api.batch() || !f->api.url.empty()) {
      item_field_flags which;
      which.batch = f->api.batch();
      which.url = f->api.url;
      if (!which.batch) which.url_fields = http::url_template::parse(f->api.url, "--url").fields();
      which.source = f->store.source;
      which.source_given = sub->count("--source") > 0;
      which.batch_key = f->api.batch_key;
      which.request_fields = f->api.shape().fields();
      if (!f->api.batch_body.empty())
        which.batch_body_fields = http::batch_body::parse(f->api.batch_body, "--batch-body").element_template().fields();
      f->store.source = item_field(which);
      // A source only guessed (the body's first field, no --source, no {field} in --url) may be
      // replaced by the one dibs init recorded: every field the request names is then read, and
      // the store drops the one that turns out to be its source.
      const bool source_fixed = which.source_given || !which.url_fields.empty() || which.batch || f->store.file_mode();
      f->store.more_fields = more_item_fields(which, source_fixed ? f->store.source : std::string());
      f->store.mapped_fields = f->api.answer.answer_map().names();
      f->store.map = f->api.answer.map_text();
      f->store.map_given = sub->count("--map") > 0;
      if (!which.batch && !which.source_given) f->store.source_flag = "--url";
      f->store.source_chosen = !which.batch && !which.url_fields.empty();
    }
    auto processors = f->api.factory(f->store.source);
    if (auto refused = f->api.check_tls(); !refused.empty())
      throw std::invalid_argument("the API's certificate is refused: " + refused +
                                  " (--ca-file trusts another CA; --insecure skips verification)");

    if (f->store.file_mode() && f->store.out.empty())
      throw std::invalid_argument(f->store.store == "jsonl:-" ? "--store jsonl:- needs --out - (stdout)"
                                                              : "--store jsonl:... needs --out OUT.jsonl");
    if (f->run.summary_to_stdout() && f->store.out == "-")
      throw std::invalid_argument("--summary-json - and --out - would both write to stdout: give --summary-json a file");
    f->run.prepare();
    // When stdout carries data (the enriched lines, the summary JSON), it carries nothing else.
    std::FILE* report = f->run.summary_to_stdout() || f->store.out == "-" ? stderr : stdout;
    // A dry run opens the store to look only (no journal, no index): it writes nothing.
    auto st = f->store.open(f->dry_run == 0);
    log::info("enrich: ", st->describe());
    f->api.budget.keep_in(st, f->api.origin_text());
    // No --map: dibs init's record of one, if any (the store writes its columns, the processor
    // the mapped object).
    if (!f->store.map_given && !f->store.map.empty()) f->api.answer.map = {f->store.map};
    // dibs init's record chose the source (batch mode reads its key there), --budget its
    // budget: the processors read them.
    processors = f->api.factory(f->store.source);
    if (f->dry_run > 0) {
      const auto kind = parse_store_uri(f->store.store).kind;
      const bool sql = kind == store_kind::mysql || kind == store_kind::postgresql;
      const dry_run_fields fields{f->store.source, f->store.target, sql ? f->store.mapped_fields : std::vector<std::string>{}};
      if (f->api.batch())
        run_dry_batch(*st, f->api.batch_options(f->store.source, f->api.call()), f->api.batch_request(f->store.source).body,
                      fields, f->dry_run, report);
      else
        run_dry(*st, f->api.call(), fields, f->dry_run, report);
      return exit_code::ok;
    }
    f->api.share_rate(st);
    f->api.share_answers(st);
    // Rights first: a user who may not write would otherwise claim, call the API and lose it all.
    st->check_write_rights();
    f->run.traces.apply(cfg, f->api.call().http.tls);  // --otlp-endpoint: the exporter starts
    // With --max-calls or --budget, the engine claims through the budgets; when one is spent,
    // the run stops claiming and ends once its calls in flight have. The pre-flight's items go
    // to the run first, outside the budgets' gate (it reserved their calls itself).
    engine* running = nullptr;
    auto preclaimed = std::make_shared<preclaimed_store>(f->api.budget.gate(st, [&running] {
      if (running) running->stop();
    }));
    engine e(cfg, preclaimed, std::move(processors));
    running = &e;
    f->api.on_account_spent([&running] {
      if (running) running->stop();
    });
    // Whatever ends the run or its start, the stop is unregistered before `running` is gone.
    struct account_unwatch {
      const api_flags& api;
      ~account_unwatch() { api.on_account_spent({}); }
    } unwatch{f->api};
    const auto& run_cfg = e.config();
    const auto own_worker = run_cfg.worker_prefix + "-0";
    // Without them the run has no total: a store that stays out of reach ends it here, with why.
    auto first_read = read_counts(*st, 5);
    if (!first_read.stats) std::rethrow_exception(first_read.thrown);
    const auto before = *first_read.stats;
    const std::uint64_t total = before.pending + before.leased_live + before.leased_expired;
    if (before.leased_live > 0) {  // another worker's leases, perhaps a dead one's: say why progress may stall
      try {
        auto holders = st->lease_holders();
        if (const auto note = lease_wait_note(holders); !note.empty()) log::warn(note);
      } catch (const std::exception&) {  // a store that can't list its lease holders: nothing to add
      }
    }

    // Last before the run starts: the items it asks are the run's first, their leases fresh.
    if (!f->no_preflight)
      run_preflight(*st, f->api.call(),
                    preflight_batch_of(f->api, f->store.source),
                    f->store.source, f->api.url_flag(),
                    claim_request{1, own_worker, run_cfg.lease, run_cfg.grace, run_cfg.max_attempts}, *preclaimed,
                    &e.figures());
    // Whatever ends the start from here (a metrics port taken, a store call that throws), the
    // items handed over go back rather than wait out their leases.
    struct hand_back {
      admin_store& st;
      http::processor_options call;  // (call() makes a copy: kept, not a dangling reference)
      preclaimed_store& held;
      ~hand_back() {
        try {
          give_back_preclaimed(st, call, held.take_back());
        } catch (...) {  // left to their leases' expiry
        }
      }
    } unclaimed_back{*st, f->api.call(), *preclaimed};
    e.set_rate_control(f->api.limiter());  // POST /rate changes it while the run goes on
    // With --follow, a change stream (where the server has them) wakes idle shards at once.
    if (f->follow) st->watch([&e] { e.wake(); });
    auto foreground = f->run.foreground(total);
    foreground.admin = st.get();  // GET /workers, POST /release and /retry act on this store
    const auto result = run_engine_in_foreground(e, foreground);
    st->stop_watching();
    give_back_preclaimed(*st, f->api.call(), preclaimed->take_back());  // stopped before it claimed them
    // The store may be out of reach right as the run ends (a database restart): everything this
    // process held is already written or released, so the counts are worth a few tries, and
    // without them the run is still reported (and judged by what the engine saw). A stopped run
    // (Ctrl-C, perhaps because the database is down) tries once: its summary must not wait.
    const auto last_read = read_counts(*st, result.interrupted ? 1 : 10);
    const auto& after = last_read.stats;
    const auto& unavailable = last_read.error;
    if (after)
      std::fprintf(report, "%s\n", enrich_end_line({st->describe(), *after, result.summary, f->store.on_done == "delete",
                                           st->claim_conflicts()})
                              .c_str());
    else
      std::fprintf(report, "enrich: %s: the store's counts can't be read now (%s)\n", st->describe().c_str(), unavailable.c_str());
    std::fflush(report);
    const bool drained = after ? after->drained() : e.drained();
    if (auto said = st->finish(drained && !result.interrupted); !said.empty())
      std::fprintf(report, "enrich: %s\n", said.c_str());
    if (!result.api_calls.empty()) std::fprintf(report, "enrich: %s\n", result.api_calls.c_str());
    f->api.budget.close();
    const auto spent = f->api.budget.spent_lines();
    for (const auto& line : spent) std::fprintf(report, "enrich: %s\n", line.c_str());
    f->run.finish(result, report);
    // A right the store took away mid-run ended it: as at start, the user has a GRANT to run.
    if (const auto denied = e.denied()) throw std::runtime_error(*denied);
    // (Everything this process held was released or written before it got here.)
    if (const auto why = f->api.account_spent_why(); !why.empty()) {
      std::fprintf(report, "enrich: the API says %s\n", why.c_str());
      if (result.stop_signal == 0) return exit_code::account_spent;
    }
    // Failed items come first (1): they need a look; the budget's line above still says it was spent.
    if (!spent.empty() && result.stop_signal == 0 && result.summary.failed == 0) return exit_code::budget_spent;
    return run_exit_code({result.stop_signal, f->follow, drained, result.summary.failed});
  };
}

command add_seed_command(CLI::App& app) {
  auto* sub = app.add_subcommand("seed", "Insert N documents {<source>: <random public IPv4>, <target>: null}");
  struct flags {
    store_flags store;
    std::size_t docs = 10'000;
    std::uint64_t seed = 42;
    std::size_t distinct = 0;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, false);
  sub->add_option("--docs", f->docs, "documents to insert")->type_name("N")->capture_default_str();
  sub->add_option("--seed", f->seed, "random seed for the addresses")->type_name("N")->capture_default_str();
  sub->add_option("--distinct", f->distinct,
                  "draw the addresses from N addresses, the popular ones far more often (the same address sending "
                  "many messages; 0: every document its own random address)")
      ->type_name("N")->capture_default_str();
  sub->footer(
      "Examples:\n"
      "  dibs seed --store 'mongodb://127.0.0.1:27017/test?collection=message' --docs 100000\n"
      "  dibs seed --store 'postgresql://app@127.0.0.1:5432/geo?table=jobs' --password-file ~/.dibs-pw --docs 1000\n"
      "  dibs seed --store jsonl:in.jsonl --docs 500   (appends 500 lines to in.jsonl)");
  return [f] {
    auto st = f->store.open(true, store_flags::table_use::create);
    const auto n = st->seed_skewed(f->docs, f->seed, f->distinct);
    std::printf("seed: inserted %zu documents into %s\n", n, st->describe().c_str());
    return n == f->docs ? 0 : 1;
  };
}

}  // namespace dibs::cli
