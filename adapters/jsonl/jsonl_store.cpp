#include <dibs/stores/jsonl_store.hpp>

#include "journal_file.hpp"
#include "input_file.hpp"
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

namespace od = simdjson::ondemand;

namespace {
const char* type_name(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "array";
    case od::json_type::object: return "object";
    case od::json_type::number: return "number";
    case od::json_type::boolean: return "boolean";
    case od::json_type::null: return "null";
    case od::json_type::string: return "string";
  }
  return "unknown";
}

// The member at `pointer` of `doc` as a job field: a string, or another type with its JSON text.
job_field member_field(od::document& doc, const std::string& pointer) {
  job_field f;
  od::value v;
  od::json_type vt{};
  std::string_view s;
  if (doc.at_pointer(pointer).get(v) || v.type().get(vt)) {
    f.st = job_field::state::missing;
  } else if (vt != od::json_type::string) {
    f.st = job_field::state::not_string;
    f.type_name = type_name(vt);
    std::string_view raw;
    od::object o;
    od::array a;
    bool got = true;
    if (vt == od::json_type::object) got = !v.get_object().get(o) && !o.raw_json().get(raw);
    else if (vt == od::json_type::array) got = !v.get_array().get(a) && !a.raw_json().get(raw);
    else raw = v.raw_json_token();
    if (got) {
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' || raw.back() == '\n'))
        raw.remove_suffix(1);
      f.json = std::string(raw);
    }
  } else if (v.get_string().get(s)) {
    f.st = job_field::state::not_string;
    f.type_name = "an invalid string";
  } else {
    f.st = job_field::state::string;
    f.value = std::string(s);
  }
  return f;
}

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

  std::unordered_map<std::size_t, bool> finished;  // line -> done (true) or failed
  if (!opts_.out.empty() && have_in) {
    if (!opts_.read_only && exists_here(opts_.out) && !exists_here(journal))
      throw std::runtime_error("the output " + opts_.out + " exists (a finished run?): remove it or choose another " + setting_name("out"));
    // Opened (and locked) before it is read: a symbolic link there is refused, not read.
    journal_ = std::make_unique<journal_file>(journal, opts_.read_only);
    const auto header = header_of(in_stat);
    const auto scan = scan_journal(journal_->read_all(), header, journal);
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
        journal_->start_new(header);
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
  std::vector<std::string> more_pointers;
  for (const auto& name : opts_.more_fields) more_pointers.push_back(json_pointer_of(name));
  od::parser parser;
  std::string line, bad_lines;
  std::size_t bad = 0;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (blank(line)) continue;
    if (auto it = finished.find(n); it != finished.end()) {
      ++finished_before_;
      ++(it->second ? done_before_ : failed_before_);
      continue;
    }
    const simdjson::padded_string padded(line);
    od::document doc;
    od::json_type type{};
    if (parser.iterate(padded).get(doc) || doc.type().get(type) || type != od::json_type::object) {
      // Not an item: failed now, with the reason, so it is in the output like any other line.
      const std::string why = "line " + std::to_string(n) + " is not a JSON object";
      if (!opts_.read_only) log::item(log::level::warn, std::to_string(n), "failed", why);
      bad_lines += failed_record(n, why, 0, 0);
      if (!journaling()) unjournaled_failures_.emplace_back(n, why);
      ++bad;
      ++finished_before_;
      ++failed_before_;
      continue;
    }
    if (target_set(line)) {  // the user's value (null means pending): done, and passed through as it is
      ++finished_before_;
      ++done_before_;
      continue;
    }
    job_field f = member_field(doc, pointer);
    std::vector<job_field> more;
    for (std::size_t i = 0; i < opts_.more_fields.size(); ++i) {
      more.push_back(member_field(doc, more_pointers[i]));
      more.back().name = opts_.more_fields[i];
    }
    mem_.add(std::move(f), std::move(more));
    line_of_.push_back(n);
  }
  if (!bad_lines.empty() && journaling()) journal_->append(bad_lines, bad);
}

void jsonl_store::count_finished_output() {
  std::ifstream out(opts_.out, std::ios::binary);
  simdjson::dom::parser parser;
  std::string line;
  while (std::getline(out, line)) {
    if (blank(line)) continue;
    simdjson::dom::element doc, failed;
    const bool is_failed = !parser.parse(line).get(doc) && !doc[own_member]["failed"].get(failed);
    ++finished_before_;
    ++(is_failed ? failed_before_ : done_before_);
  }
}

jsonl_store::~jsonl_store() { join_pool(); }

bool jsonl_store::journaling() const { return journal_ && journal_->exists() && !opts_.read_only; }

// Items are known to the engine (and in logs) by their line number or --id-field key; the memory
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
  if (!records.empty() && journaling()) journal_->append(records, landing.size());  // throws: nothing changed
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

std::vector<pending_sample> jsonl_store::sample_pending_items(std::size_t n) {
  std::vector<pending_sample> out;
  {
    std::lock_guard op(op_mutex_);
    for (std::size_t i = 1; i <= line_of_.size() && out.size() < n; ++i)
      if (auto it = mem_.get(std::to_string(i)); it && !it->failed && it->writes == 0 && !it->lease) {
        pending_sample s;
        s.id = line_id(it->id);
        s.source = it->source;
        s.source.name = opts_.source;
        s.more = it->more;
        out.push_back(std::move(s));
      }
  }
  return out;
}

std::optional<pending_sample> jsonl_store::sample_pending() {
  std::optional<memory_store::item> open;
  {
    std::lock_guard op(op_mutex_);
    // A line whose source is a string first: one odd line must not refuse a template that fits the rest.
    for (std::size_t i = 1; i <= line_of_.size(); ++i) {
      auto it = mem_.get(std::to_string(i));
      if (!it || it->failed || it->writes > 0) continue;
      if (!open) open = it;
      if (it->source.st == job_field::state::string) {
        open = it;
        break;
      }
    }
  }
  if (!open) return std::nullopt;
  pending_sample s;
  s.id = line_id(open->id);
  s.more = open->more;
  s.source = open->source;
  s.source.name = opts_.source;
  // Only the source is kept in memory: the line's other names come from the file.
  std::ifstream in(opts_.in, std::ios::binary);
  std::string line;
  for (std::size_t n = 1; n <= line_of_[std::stoul(open->id) - 1] && std::getline(in, line); ++n) {
  }
  s.fields = member_names(line);
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
