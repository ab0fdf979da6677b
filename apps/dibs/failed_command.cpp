// `dibs failed`: every failed item as a JSON line (failed_line.hpp) on stdout or in --out FILE,
// all of them or those `dibs retry` would select with the same --reason / --reason-is / --since.
// Reads only. The lines go back through `dibs retry --from FILE`, which puts exactly those back.
#include "commands.hpp"
#include "failed_line.hpp"
#include "failure_filter_flags.hpp"

#include "adapters/jsonl/private_file.hpp"

#include <dibs/stores/store_uri.hpp>


#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

namespace dibs::cli {

namespace {
// --out naming the run's own input, output (--run-out) or journal would empty it before the
// lines are read: the paid answers gone. Refused, whatever the path's spelling.
void refuse_run_files(const std::string& out, const store_flags& store) {
  if (out.empty()) return;
  std::vector<std::pair<std::string, const char*>> own;
  try {
    const auto uri = parse_store_uri(store.store);
    if (uri.kind == store_kind::jsonl) own.emplace_back(uri.path, "the run's input");
  } catch (const std::exception&) {
    return;  // the store's own open says what is wrong with it
  }
  if (!store.out.empty()) {
    own.emplace_back(store.out, "the run's output");
    own.emplace_back(store.out + ".journal", "the run's journal");
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto mine = fs::weakly_canonical(out, ec);
  for (const auto& [path, what] : own) {
    std::error_code same_ec, canon_ec;
    // The same file by its device and inode (a hard link too), or by its path when one is not there yet.
    const bool same = fs::exists(out) && fs::exists(path) ? fs::equivalent(out, path, same_ec)
                                                          : !ec && fs::weakly_canonical(path, canon_ec) == mine && !canon_ec;
    if (same)
      throw std::invalid_argument("--out " + out + " is " + what + " (" + path +
                                  "): the failed lines go to a file of their own, or to stdout without --out");
  }
}
}  // namespace

command add_failed_command(CLI::App& app) {
  auto* sub = app.add_subcommand("failed", "Every failed item as a JSON line: key, source, reason, status, answer, attempts, when");
  struct flags {
    failed_items_flags items;
    std::string out;
  };
  auto f = std::make_shared<flags>();
  f->items.add_to(*sub, "--run-out");
  sub->add_option("--out", f->out, "write the lines to this file (created private, 0600; a symbolic link is refused), not stdout")
      ->type_name("FILE");
  sub->footer(
      "Each line: {\"key\",\"source\",\"reason\",\"http_status\",\"answer\",\"attempts\",\"failed_at\"}.\n"
      "Examples:\n"
      "  dibs failed --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --reason 'HTTP 404' --out failed.jsonl\n"
      "  dibs retry --store 'mysql://app@127.0.0.1:3306/geo?table=jobs' --from failed.jsonl\n"
      "  dibs failed --store jsonl:in.jsonl --run-out out.jsonl --since 2h   (file mode: --since is refused)");
  return [f] {
    auto which = f->items.filters.filter();
    auto st = f->items.open();  // finds the run's journal when --run-out is not given
    refuse_run_files(f->out, f->items.store);  // before --out is opened: O_TRUNC would empty it
    std::FILE* out = stdout;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
    if (!f->out.empty()) {
      const int fd = jsonl::open_private(f->out, O_WRONLY | O_CREAT | O_TRUNC, "the failed lines' file", "out");
      file.reset(::fdopen(fd, "w"));
      if (!file) {
        ::close(fd);
        throw std::runtime_error("cannot write " + f->out);
      }
      out = file.get();
    }
    std::uint64_t n = 0;
    st->list_failed(which, [&](const failed_item& item) {
      const auto line = failed_line(item) + "\n";
      if (std::fwrite(line.data(), 1, line.size(), out) != line.size()) throw std::runtime_error("cannot write the lines");
      ++n;
    });
    if (std::fflush(out) != 0) throw std::runtime_error("cannot write the lines");
    if (file) {
      if (std::fclose(file.release()) != 0) throw std::runtime_error("cannot write " + f->out);
      std::fprintf(stderr, "failed: %llu item%s from %s in %s\n", (unsigned long long)n, n == 1 ? "" : "s",
                   st->describe().c_str(), f->out.c_str());
    }
    return 0;
  };
}

}  // namespace dibs::cli
