// `dibs retry`: failed items back to pending (attempts 0, the failure cleared), all of them or
// those whose reason contains --reason TEXT (or is --reason-is TEXT) and that failed since --since. Only failed items are
// touched; the next `dibs enrich` does them again.
#include "commands.hpp"
#include "file_mode_output.hpp"
#include "since_flag.hpp"
#include "store_flags.hpp"

#include <dibs/log.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

namespace dibs::cli {

command add_retry_command(CLI::App& app) {
  auto* sub = app.add_subcommand("retry", "Put failed items back to pending (attempts 0), all or by --reason / --since");
  struct flags {
    store_flags store;
    std::string reason;
    std::optional<std::string> reason_is;
    std::string since;
  };
  auto f = std::make_shared<flags>();
  f->store.add_to(*sub, true);
  auto* contains = sub->add_option("--reason", f->reason, "only failures whose reason contains this text")->type_name("TEXT");
  sub->add_option("--reason-is", f->reason_is, "only failures whose reason is this text, as `dibs status` lists it")
      ->type_name("TEXT")
      ->excludes(contains);
  sub->add_option("--since", f->since,
                  "only failures since then: a duration ago (30m, 2h) or an RFC 3339 time (2026-11-23T17:00:00Z); "
                  "MongoDB, MySQL, PostgreSQL")
      ->type_name("DURATION|TIME");
  sub->footer(
      "Examples:\n"
      "  dibs retry --store 'mongodb://127.0.0.1:27017/test?collection=message'\n"
      "  dibs retry --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --reason 'timed out' --since 2h\n"
      "  dibs retry --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --reason-is 'HTTP 404'\n"
      "  dibs retry --store jsonl:in.jsonl --out out.jsonl");
  return [f] {
    retry_filter which;
    which.reason_contains = f->reason;
    which.reason_is = f->reason_is;
    if (!f->since.empty()) since_flag("--since", f->since, which);
    f->store.uri_to_connect();  // a flag that can't apply (--password-file on a file) is refused first, alone
    if (const auto note = find_file_mode_output(f->store); !note.empty()) log::warn(note);
    auto st = f->store.open(false);
    const auto n = st->retry_failed(which);
    std::printf("retry: %llu failed item%s back to pending in %s\n", (unsigned long long)n, n == 1 ? "" : "s",
                st->describe().c_str());
    return 0;
  };
}

}  // namespace dibs::cli
