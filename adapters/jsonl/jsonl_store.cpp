#include <dibs/stores/jsonl_store.hpp>

#include "journal_file.hpp"
#include "input_file.hpp"
#include "failed_lines.hpp"
#include "input_line.hpp"
#include "journal_format.hpp"
#include "json_members.hpp"
#include "private_file.hpp"

#include <dibs/ipapi/ipv4_ranges.hpp>
#include <dibs/setting_error.hpp>
#include <profiles/ipapi/skewed_draw.hpp>
#include "engine/src/json_text.hpp"
#include <dibs/log.hpp>

#include <algorithm>

#include <simdjson.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace dibs::jsonl {

namespace {
memory_store_options memory_options(const jsonl_options& o, std::function<store_time()> now) {
  memory_store_options m;
  m.now = std::move(now);
  m.source_field = o.source;
  m.target_field = o.target;
  m.keep_results = false;  // results go to the journal, not to memory
  return m;
}
}  // namespace

jsonl_store::jsonl_store(jsonl_options opts)
    : blocking_store(1),
      opts_(std::move(opts)),
      mem_(memory_options(opts_, [this] { return frozen_now_ ? *frozen_now_ : store_clock::now(); })) {
  if (opts_.target.find('.') != std::string::npos)
    throw std::invalid_argument(setting_name("target") + " '" + opts_.target + "': file mode writes a top-level field");
  if (opts_.target == own_member)
    throw std::invalid_argument(setting_name("target") + " '" + opts_.target + "': file mode keeps its own record of a line there; choose another name");
  struct stat in_stat {};
  const bool have_in = ::stat(opts_.in.c_str(), &in_stat) == 0;
  if (!have_in && !opts_.read_only) fail_file("cannot read the input", opts_.in);
  if (have_in && !opts_.id_field.empty()) {
    std::ifstream whole(opts_.in, std::ios::binary);
    if (!whole) fail_file("cannot read the input", opts_.in);
    const std::string text((std::istreambuf_iterator<char>(whole)), std::istreambuf_iterator<char>());
    keys_ = read_line_keys(text, opts_.id_field, opts_.in);
  }
  const std::string journal = opts_.out + ".journal";
  // A refusal from here on (this constructor throws: no destructor runs) leaves no journal it made.
  struct journal_guard {
    jsonl_store& s;
    bool done = false;
    ~journal_guard() {
      if (!done) s.drop_unused_journal();
    }
  } guard{*this};

  std::unordered_map<std::size_t, bool> finished;  // line -> done (true) or failed
  std::size_t users_done = 0, first_users_done = 0;  // lines whose target the input already holds
  if (!opts_.out.empty() && have_in) {
    if (!opts_.read_only && exists_here(opts_.out) && !exists_here(journal))
      // Said so that no one pays for the whole input again by following it: a run that finished
      // leaves its output and no journal, and its failed rows are put back with `retry`.
      throw std::runtime_error("the output " + opts_.out + " exists (a finished run?) and no journal is beside it: nothing was done. " +
                               "A run that finished is not run again: to ask its failed rows again, put them back with " +
                               "`dibs retry` (dibs retry --help) and run this command again; to ask every row again (each " +
                               "call made, and paid, again), remove the output or choose another " + setting_name("out"));
    // Opened (and locked) before it is read: a symbolic link there is refused, not read.
    journal_made_here_ = !opts_.read_only && !exists_here(journal);
    journal_ = std::make_unique<journal_file>(journal, opts_.read_only);
    const auto scan = scan_journal(journal_->read_all(), header_of(in_stat), journal, same_content_of(opts_.in));
    journal_has_records_ = !scan.entries.empty();
    adopt_target(scan.target, journal);  // the run's target, as its journal records it
    for (const auto& e : scan.entries) {
      if (e.retry) finished.erase(e.line);  // `dibs retry` put the line back
      else finished[e.line] = e.done;
    }
    if (!opts_.read_only) {
      if (scan.torn_length > 0)
        log::warn("the journal ", journal, " ends in a torn record (", scan.torn_length, " byte(s) at byte ",
                  scan.torn_offset, ", from a write that did not finish): it is dropped, and ",
                  scan.torn_line ? "line " + std::to_string(scan.torn_line) + " will be done again"
                                 : std::string("the outcome it held, if any, will be done again"));
      if (scan.valid_end == 0)
        journal_->start_new(journal_header_for_run());
      else
        journal_->keep_until(scan.valid_end);
    }
  }

  if (!have_in) return;
  if (opts_.read_only && !opts_.out.empty() && ::access(journal.c_str(), F_OK) != 0 &&
      ::access(opts_.out.c_str(), F_OK) == 0) {
    count_finished_output();  // a finished run: its output says how every line ended
    return;
  }
  std::ifstream in(opts_.in, std::ios::binary);
  if (!in) fail_file("cannot read the input", opts_.in);
  const auto pointer = json_pointer_of(opts_.source);
  std::vector<more_field> more;
  for (const auto& name : opts_.more_fields) more.push_back({name, json_pointer_of(name)});
  simdjson::dom::parser parser;
  std::string line, first_reason;
  std::size_t lines = 0, items = 0;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (blank(line)) continue;
    ++lines;
    if (auto it = finished.find(n); it != finished.end()) {
      if (it->second) {  // done at an earlier start: only an object is ever done
        ++items;
        if (!first_done_line_) first_done_line_ = n;
      }
      ++finished_before_;
      ++(it->second ? done_before_ : failed_before_);
      continue;
    }
    auto read = read_input_line(parser, line, n, pointer, more);
    if (read.what == input_line::kind::failed) {
      // Not an item: failed now, with the reason, so it is in the output like any other line
      // (journaled with the first outcome written: a run refused before it leaves no journal behind).
      if (first_reason.empty()) first_reason = read.why;
      unjournaled_records_ += failed_record(n, read.why, 0, 0);
      ++unjournaled_count_;
      unjournaled_failures_.emplace_back(n, read.why);
      ++finished_before_;
      ++failed_before_;
      continue;
    }
    ++items;
    if (target_set(line)) {  // the user's value (null means pending): done, and passed through as it is
      ++finished_before_;
      ++done_before_;
      if (!first_done_line_) first_done_line_ = n;
      if (!users_done++) first_users_done = n;
      continue;
    }
    // A member the map would write over on a line to be asked is the user's: refused before
    // anything is asked.
    // The line's members looked at once, whatever the number of mapped names.
    if (!opts_.read_only && !opts_.mapped_fields.empty())
      if (const auto layout = top_level_members(line))
        for (const auto& m : layout->members)
          if (m.key != opts_.target && std::count(opts_.mapped_fields.begin(), opts_.mapped_fields.end(), m.key))
            throw std::invalid_argument(opts_.in + ": line " + std::to_string(n) + " has a member '" + std::string(m.key) +
                                        "' of its own, which " + setting_name("map") +
                                        " would write over (every other byte of a line is kept as written): map the answer "
                                        "to a name the lines do not use");
    mem_.add(std::move(read.source), std::move(read.more));
    line_of_.push_back(n);
  }
  if (const auto refusal = not_json_lines(opts_.in, lines, items, first_reason); !refusal.empty())
    throw std::invalid_argument(refusal);
  if (!opts_.read_only)
    for (const auto& [n, why] : unjournaled_failures_) log::item(log::level::warn, std::to_string(n), "failed", why);
  // Lines that already hold the target are done and never asked: said, as the field may be one of
  // the user's own that the run's target happens to name (a "location" in reviews to label).
  if (!opts_.read_only && users_done > 0)
    log::warn(opts_.in, ": ", users_done, " line", users_done == 1 ? " already holds" : "s already hold", " a value in '", opts_.target,
              "' (line ", first_users_done, " the first): done, not asked; ", setting_name("target"),
              " names the field the answers go to");
  guard.done = true;
}

void jsonl_store::adopt_target(const std::optional<std::string>& recorded, const std::string& journal) {
  if (!recorded || *recorded == opts_.target) return;
  if (opts_.target_given)
    throw std::invalid_argument(setting_name("target") + " " + opts_.target + " contradicts the journal " + journal +
                                ", whose run writes its answers to " + *recorded + " (leave " + setting_name("target") +
                                " out to use it, or remove the journal to start over)");
  opts_.target = *recorded;
}

std::string jsonl_store::journal_header_for_run() const {
  struct stat in {};
  if (::stat(opts_.in.c_str(), &in) != 0) fail_file("cannot read the input", opts_.in);
  const auto size = static_cast<std::uint64_t>(in.st_size);
  return journal_header(size, static_cast<std::int64_t>(in.st_mtim.tv_sec) * 1'000'000'000LL + in.st_mtim.tv_nsec, opts_.target,
                        input_prefix_sha256(opts_.in, size));
}

void jsonl_store::drop_unused_journal() {
  if (journaling() && journal_made_here_ && !journal_has_records_) journal_->remove_if_ours();
}

void jsonl_store::journal_unjournaled() {
  if (unjournaled_records_.empty() || !journaling()) return;
  journal_->append(unjournaled_records_, unjournaled_count_);
  journal_has_records_ = true;
  unjournaled_records_.clear();
  unjournaled_count_ = 0;
  unjournaled_failures_.clear();
}

void jsonl_store::count_finished_output() {
  std::ifstream out(opts_.out, std::ios::binary);
  simdjson::dom::parser parser;
  std::string line;
  for (std::size_t k = 1; std::getline(out, line); ++k) {
    if (blank(line)) continue;
    simdjson::dom::object doc;
    simdjson::dom::element failed, target;
    const bool object = !parser.parse(line).get(doc);
    const bool is_failed = object && !doc[own_member]["failed"].get(failed);
    const bool is_done = object && !doc[opts_.target].get(target) && !target.is_null();
    if (object && !is_failed && !is_done) {  // read with another target than the run's
      if (target_from_output()) {
        finished_before_ = done_before_ = failed_before_ = 0;
        return count_finished_output();
      }
      std::string members;
      for (auto field : doc) members += (members.empty() ? "" : ", ") + std::string(field.key);
      throw std::invalid_argument(open_line_in_output(k, opts_.out, opts_.target, members));
    }
    ++finished_before_;
    ++(is_failed ? failed_before_ : done_before_);
  }
}

jsonl_store::~jsonl_store() {
  join_pool();
  drop_unused_journal();  // a run that recorded nothing (refused at start, or stopped before any outcome)
}

bool jsonl_store::journaling() const { return journal_ && journal_->exists() && !opts_.read_only; }

// Items are known to the engine (and in logs) by their line number or id_field key; the memory
// store inside numbers them 1..k in line order, so the two translate by a search in line_of_.
std::string jsonl_store::name_of_line(std::size_t n) const {
  if (opts_.id_field.empty()) return std::to_string(n);
  const auto it = keys_.key_of_line.find(n);
  return it != keys_.key_of_line.end() ? it->second : std::to_string(n);  // every non-blank line has one
}

std::size_t jsonl_store::line_named(const std::string& name) const {
  if (opts_.id_field.empty()) return std::stoul(name);
  const auto it = keys_.line_of_key.find(name);
  return it != keys_.line_of_key.end() ? it->second : 0;
}

std::string jsonl_store::memory_id(const std::string& name) const {
  const auto n = line_named(name);
  const auto it = std::lower_bound(line_of_.begin(), line_of_.end(), n);
  if (it == line_of_.end() || *it != n) return "0";  // no such item: the memory store reports it lost
  return std::to_string(it - line_of_.begin() + 1);
}

bool jsonl_store::target_set(const std::string& line) const {
  const auto value = member_text(line, opts_.target);
  return value && *value != "null";
}

std::string jsonl_store::line_id(const std::string& memory) const { return name_of_line(line_of_[std::stoul(memory) - 1]); }

template <class Item>
std::vector<Item> jsonl_store::to_memory(std::vector<Item> batch) const {
  for (auto& x : batch) x.ref.id = memory_id(x.ref.id);
  return batch;
}

std::vector<job> jsonl_store::claim_blocking(const claim_request& req) {
  std::lock_guard op(op_mutex_);
  auto jobs = mem_.claim_now(req);
  for (auto& j : jobs) j.id = line_id(j.id);
  return jobs;
}

renew_result jsonl_store::renew_blocking(const std::vector<renewal>& batch, millis lease) {
  std::lock_guard op(op_mutex_);
  auto r = mem_.renew_now(to_memory(batch), lease);
  for (auto& id : r.lost) id = line_id(id);
  return r;
}

write_result jsonl_store::release_blocking(const std::vector<release_item>& batch) {
  std::lock_guard op(op_mutex_);
  auto r = mem_.release_now(to_memory(batch));
  for (auto& id : r.lost) id = line_id(id);
  return r;
}

bool jsonl_store::holds(const lease_ref& ref, store_time now, bool check_until) const {
  const auto it = mem_.get(ref.id);
  return it && it->lease && it->lease->by == ref.by && it->lease->token == ref.token &&
         (!check_until || it->lease->until >= now);
}

namespace {
// Applies a checked batch to memory with the clock stopped at the time it was checked.
class frozen_clock {
 public:
  frozen_clock(std::optional<store_time>& slot, store_time now) : slot_(slot) { slot_ = now; }
  ~frozen_clock() { slot_.reset(); }
  frozen_clock(const frozen_clock&) = delete;
  frozen_clock& operator=(const frozen_clock&) = delete;

 private:
  std::optional<store_time>& slot_;
};

std::string without_newline(const std::string& record) { return record.substr(0, record.size() - 1); }

// Only bytes the journal's reader accepts: a reason that is not valid UTF-8 (an API's message)
// keeps its ASCII, the rest becomes '?'.
std::string failure_line(std::size_t line, const failure& f) {
  auto record = failed_record(line, f.reason, f.http_status, f.attempts);
  if (record_problem(without_newline(record)).empty()) return record;
  std::string ascii = f.reason;
  for (auto& c : ascii)
    if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  return failed_record(line, ascii, f.http_status, f.attempts);
}

// What memory keeps of an outcome: a completion's answer goes to the journal only.
completion for_memory(const completion& c) { return {c.ref, {}}; }
failure for_memory(const failure& f) { return f; }
}  // namespace

// The journal first, then memory: memory never holds an outcome the journal has not, so a write
// the disk refuses leaves the leases in place for the engine's retry. `record_of` makes an
// item's journal record (nullopt: refused, named in `r.refused`); `apply` lands the batch in memory.
template <class Item, class Record, class Apply>
write_result jsonl_store::journal_then_apply(const std::vector<Item>& batch, bool check_until, Record record_of,
                                             Apply apply) {
  std::lock_guard op(op_mutex_);
  // The lines that failed as IN was read, with the run's first outcome: a run that claimed and
  // gave everything back (a refused pre-flight) leaves no journal behind.
  journal_unjournaled();
  const auto now = store_clock::now();
  write_result r;
  std::vector<Item> landing;
  std::string records;
  for (const auto& x : batch) {
    Item m = for_memory(x);
    m.ref.id = memory_id(x.ref.id);
    if (!holds(m.ref, now, check_until)) {
      r.lost.push_back(x.ref.id);
      continue;
    }
    const auto record = record_of(x, r);
    if (!record) continue;
    records += *record;
    landing.push_back(std::move(m));
  }
  if (!records.empty() && journaling()) {
    journal_->append(records, landing.size());  // throws: nothing changed
    journal_has_records_ = true;
  }
  frozen_clock at(frozen_now_, now);
  const auto applied = apply(landing);
  r.applied = applied.applied;
  for (const auto& id : applied.lost) r.lost.push_back(line_id(id));  // checked above: never happens
  return r;
}

write_result jsonl_store::complete_blocking(const std::vector<completion>& batch) {
  const auto record_of = [&](const completion& c, write_result& r) -> std::optional<std::string> {
    auto record = done_record(line_named(c.ref.id), compact_json(c.result_json));
    if (auto why = record_problem(without_newline(record)); !why.empty()) {
      r.refused.emplace_back(c.ref.id, "file mode can't journal this answer: it is " + why);
      return std::nullopt;
    }
    return record;
  };
  return journal_then_apply(batch, true, record_of, [&](const std::vector<completion>& landing) {
    return mem_.complete_now(landing);
  });
}

write_result jsonl_store::fail_blocking(const std::vector<failure>& batch) {
  const auto record_of = [&](const failure& f, write_result&) -> std::optional<std::string> {
    return failure_line(line_named(f.ref.id), f);
  };
  return journal_then_apply(batch, false, record_of, [&](const std::vector<failure>& landing) {
    return mem_.fail_now(landing);
  });
}

store_stats jsonl_store::stats_blocking() {
  std::lock_guard op(op_mutex_);
  auto s = mem_.stats_now();
  s.done += done_before_;
  s.failed += failed_before_;
  return s;
}

std::size_t jsonl_store::seed(std::size_t n, std::uint64_t seed) { return seed_skewed(n, seed, 0); }

std::size_t jsonl_store::seed_skewed(std::size_t n, std::uint64_t seed, std::size_t distinct) {
  if (opts_.source.find('.') != std::string::npos)
    throw std::invalid_argument("seeding a file writes a top-level " + setting_name("source") + ", not '" + opts_.source + "'");
  std::ofstream out(opts_.in, std::ios::app | std::ios::binary);
  if (!out) fail_file("cannot append to", opts_.in);
  ipv4_draw draw(n, distinct, seed);
  const auto key = json_string(opts_.source);
  for (std::size_t i = 0; i < n; ++i) out << '{' << key << ":\"" << ipv4_to_string(draw.next()) << "\"}\n";
  out.flush();
  if (!out) fail_file("cannot write", opts_.in);
  return n;
}

std::string jsonl_store::describe() const {
  return "jsonl " + opts_.in + (opts_.out.empty() ? "" : " -> " + opts_.out);
}

}  // namespace dibs::jsonl
