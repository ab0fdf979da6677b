// `dibs retry`: failed items back to pending (attempts 0, the failure cleared), all of them or
// those whose reason contains --reason TEXT (or is --reason-is TEXT) and that failed since --since. Only failed items are
// touched; the next `dibs enrich` does them again.
#include "commands.hpp"
#include "failed_line.hpp"
#include "failure_filter_flags.hpp"


#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>
#include <optional>

namespace dibs::cli {

namespace {
// The keys of `dibs failed`'s lines in `path` ("-": stdin); a line that has none is refused by number.
std::vector<std::string> keys_of_failed_lines(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw std::invalid_argument("--from " + path + ": cannot read it");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::vector<std::string> keys;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto key = key_of_failed_line(line);
    if (!key) throw std::invalid_argument("--from " + path + ": line " + std::to_string(n) + " is no line of `dibs failed` (no \"key\")");
    keys.push_back(std::move(*key));
  }
  return keys;
}
}  // namespace

command add_retry_command(CLI::App& app) {
  auto* sub = app.add_subcommand("retry", "Put failed items back to pending (attempts 0), all or by --reason / --since");
  struct flags {
    failed_items_flags items;
    std::string from;
  };
  auto f = std::make_shared<flags>();
  f->items.add_to(*sub);
  sub->add_option("--from", f->from,
                  "only the items of these lines: `dibs failed`'s output (its \"key\"s), a file or - for stdin; "
                  "with the other filters, those of them that match")
      ->type_name("FILE");
  sub->footer(
      "Examples:\n"
      "  dibs retry --store 'mongodb://127.0.0.1:27017/test?collection=message'\n"
      "  dibs retry --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --reason 'timed out' --since 2h\n"
      "  dibs retry --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --reason-is 'HTTP 404'\n"
      "  dibs failed --store 'postgresql://app@127.0.0.1:5432/geo?table=jobs' --reason 404 --out f.jsonl\n"
      "  dibs retry --store 'postgresql://app@127.0.0.1:5432/geo?table=jobs' --from f.jsonl\n"
      "  dibs retry --store jsonl:in.jsonl --out out.jsonl");
  return [f] {
    auto which = f->items.filters.filter();
    if (!f->from.empty()) {
      which.ids = keys_of_failed_lines(f->from);
      if (which.ids.empty()) {
        std::printf("retry: %s names no item: nothing put back\n", f->from.c_str());
        return 0;
      }
    }
    auto st = f->items.open();
    const auto n = st->retry_failed(which);
    std::printf("retry: %llu failed item%s back to pending in %s\n", (unsigned long long)n, n == 1 ? "" : "s",
                st->describe().c_str());
    return 0;
  };
}

}  // namespace dibs::cli
