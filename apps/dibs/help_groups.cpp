#include "help_groups.hpp"

#include <CLI/CLI.hpp>

#include <string_view>
#include <utility>

namespace dibs::cli {

void group_enrich_flags(CLI::App& cmd) {
  static constexpr std::pair<std::string_view, std::string_view> groups[] = {
      {"--store", "Where the items are"}, {"--password-file", "Where the items are"}, {"--out", "Where the items are"},
      {"--id-field", "Where the items are"}, {"--db", "Where the items are"}, {"--collection", "Where the items are"},
      {"--source", "Where the items are"}, {"--target", "Where the items are"}, {"--lock-field", "Where the items are"},
      {"--on-done", "Where the items are"}, {"--new-target", "Where the items are"}, {"--claim", "Where the items are"},
      {"--db-threads", "Where the items are"},
      {"--url", "The request"}, {"--batch-url", "The request"}, {"--url-file", "The request"},
      {"--batch-url-file", "The request"}, {"--batch-key", "The request"}, {"--batch-size", "The request"},
      {"--batch-body", "The request"}, {"--batch-item", "The request"}, {"--batch-bytes", "The request"},
      {"--batch-linger", "The request"}, {"--header", "The request"}, {"--method", "The request"},
      {"--body", "The request"}, {"--body-type", "The request"}, {"--max-source-bytes", "The request"},
      {"--no-data-on", "What an answer means"}, {"--no-data-when", "What an answer means"},
      {"--no-data-fails", "What an answer means"}, {"--no-status-check", "What an answer means"},
      {"--max-body", "What an answer means"},
      {"--rate", "How fast, how many calls"}, {"--rate-scope", "How fast, how many calls"},
      {"--max-calls", "How fast, how many calls"}, {"--budget", "How fast, how many calls"},
      {"--max-connections", "How fast, how many calls"}, {"--fixed-concurrency", "How fast, how many calls"},
      {"--concurrency", "How fast, how many calls"}, {"--max-retry-after", "How fast, how many calls"},
      {"--connect-timeout", "Connections and timeouts"}, {"--request-timeout", "Connections and timeouts"},
      {"--idle-timeout", "Connections and timeouts"}, {"--ca-file", "Connections and timeouts"},
      {"--insecure", "Connections and timeouts"}, {"--backoff-base", "Connections and timeouts"},
      {"--backoff-max", "Connections and timeouts"},
      {"--reuse-answers", "Answer reuse"}, {"--answer-ttl", "Answer reuse"}, {"--answer-expiry", "Answer reuse"}, {"--answer-cache-entries", "Answer reuse"},
      {"--answer-cache-bytes", "Answer reuse"},
  };
  for (auto* o : cmd.get_options()) {
    const auto name = o->get_name(false, true);  // the long name as given ("--url")
    if (name.empty() || name == "--help" || name.rfind("-h", 0) == 0) continue;
    std::string_view group = "The run";
    for (const auto& [flag, g] : groups)
      if (name == flag) group = g;
    o->group(std::string(group));
  }
}

}  // namespace dibs::cli
