// jsonl_store's `dibs retry` and failure breakdown (failed_lines.hpp has the rules), and its lease holders.
#include <dibs/stores/jsonl_store.hpp>

#include <dibs/setting_error.hpp>

#include "failed_lines.hpp"
#include "input_file.hpp"
#include "json_members.hpp"

#include <dibs/log.hpp>
#include "journal_file.hpp"
#include "journal_format.hpp"
#include "private_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unordered_set>

namespace dibs::jsonl {

namespace {
std::string header_for(const std::string& in) {
  struct stat st {};
  if (::stat(in.c_str(), &st) != 0) throw std::runtime_error("cannot read the input " + in + ": " + std::strerror(errno));
  return journal_header(static_cast<std::uint64_t>(st.st_size),
                        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

// IN's non-blank lines, by number: the k-th line of OUT is the k-th of these.
std::vector<std::size_t> item_lines(const std::string& in) {
  std::ifstream f(in, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read the input " + in + ": " + std::strerror(errno));
  std::vector<std::size_t> lines;
  std::string line;
  for (std::size_t n = 1; std::getline(f, line); ++n)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(n);
  return lines;
}

}  // namespace

std::uint64_t jsonl_store::retry_failed(const retry_filter& which) {
  if (which.since || which.since_ago)
    throw std::invalid_argument(setting_name("since") + ": file mode records no failure times; select with " +
                                setting_name("reason") + ", or retry every failed line");
  if (opts_.out.empty())
    throw std::invalid_argument("dibs retry in file mode needs " + setting_name("out") +
                                " OUT.jsonl: the run's failures are in OUT.jsonl.journal or OUT.jsonl");
  std::lock_guard op(op_mutex_);
  const std::unordered_set<std::string> ids(which.ids.begin(), which.ids.end());
  auto selected = [&](const line_outcome& o) {
    return !o.done && reason_selected(o.reason, which.reason_contains, which.reason_is) && id_selected(ids, name_of_line(o.line));
  };
  const std::string path = opts_.out + ".journal";
  const auto header = header_for(opts_.in);
  journal_.reset();  // this store's own (read-only) view of it
  if (exists_here(path)) {
    journal_file j(path, false);  // locked: refused while a run is at it
    const auto text = j.read_all();
    const auto scan = scan_journal(text, header, path, same_content_of(opts_.in));
    std::string records;
    std::uint64_t n = 0;
    for (const auto& o : outcomes_in_journal(std::string_view(text).substr(0, scan.valid_end), header, path, same_content_of(opts_.in)))
      if (selected(o)) {
        records += retry_record(o.line);
        ++n;
      }
    if (n == 0) return 0;
    j.keep_until(scan.valid_end);  // a torn last record goes, as the next run would cut it
    j.append(records, n);
    return n;
  }
  if (!exists_here(opts_.out)) return 0;  // no run has finished a line yet: nothing failed
  // A finished run: OUT holds the outcomes. A new journal holds all of them but the lines put back.
  auto outcomes = finished_outcomes();
  std::vector<line_outcome> kept;
  std::uint64_t n = 0;
  for (auto& o : outcomes) {
    if (selected(o)) ++n;
    else kept.push_back(std::move(o));
  }
  if (n == 0) return 0;
  journal_file j(path, false);
  const auto run_header = journal_header_for_run();  // with the target, for the commands after it
  const auto text = journal_text(run_header, kept);
  j.start_new(run_header);
  j.append(text.substr(run_header.size() + 1), kept.size());
  return n;
}

bool jsonl_store::target_from_output() {
  if (opts_.target_given) return false;  // the user's word: a target no line holds is refused
  const auto found = answers_member(read_file(opts_.in), read_file(opts_.out));
  if (found.empty() || found == opts_.target) return false;
  log::warn("file mode: ", opts_.out, " holds the run's answers in '", found, "', not '", opts_.target, "': read as ",
            setting_name("target"), " ", found);
  opts_.target = found;
  return true;
}

std::vector<line_outcome> jsonl_store::finished_outcomes() {
  const auto out_text = read_file(opts_.out);
  try {
    return outcomes_in_output(out_text, item_lines(opts_.in), opts_.target, opts_.out);
  } catch (const std::invalid_argument&) {
    if (!target_from_output()) throw;
    return outcomes_in_output(out_text, item_lines(opts_.in), opts_.target, opts_.out);
  }
}

std::vector<line_outcome> jsonl_store::recorded_outcomes() {
  const std::string path = opts_.out + ".journal";
  if (journal_ && journal_->exists())
    return outcomes_in_journal(journal_->read_all(), header_for(opts_.in), path, same_content_of(opts_.in));
  if (!opts_.out.empty() && exists_here(opts_.out) && !exists_here(path))
    return finished_outcomes();
  return {};
}

std::optional<std::uint64_t> jsonl_store::no_data_count() {
  std::lock_guard op(op_mutex_);
  std::uint64_t n = 0;
  for (const auto& o : recorded_outcomes())
    if (o.done && says_no_data(o.body)) ++n;
  return n;
}

std::vector<failure_reason> jsonl_store::failure_reasons(std::size_t top) {
  std::lock_guard op(op_mutex_);
  std::vector<std::pair<std::string, std::string>> failed;
  const auto outcomes = recorded_outcomes();
  for (const auto& o : outcomes)
    if (!o.done) failed.emplace_back(name_of_line(o.line), o.reason);
  for (const auto& [line, why] : unjournaled_failures_) failed.emplace_back(name_of_line(line), why);
  return top_reasons(failed, top);
}

std::vector<lease_holder> jsonl_store::lease_holders() {
  std::lock_guard op(op_mutex_);
  return mem_.lease_holders_now();
}

std::uint64_t jsonl_store::release_worker(const std::string& name) {
  std::lock_guard op(op_mutex_);
  return mem_.release_worker_now(name);
}

}  // namespace dibs::jsonl
