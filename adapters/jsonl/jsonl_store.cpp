#include "jsonl_store.hpp"

#include "json_members.hpp"

#include <dibs/ipv4_ranges.hpp>
#include <dibs/json_text.hpp>
#include <dibs/log.hpp>

#include <algorithm>

#include <simdjson.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace dibs::jsonl {

namespace od = simdjson::ondemand;

namespace {
[[noreturn]] void fail_file(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

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

// The journal: a header line, then one record per line that landed.
struct journal_record {
  std::size_t line = 0;
  bool done = false;     // a result; otherwise a failure
  std::uint64_t offset = 0;  // of the record in the journal
  std::size_t length = 0;    // without the newline
};

std::string header_of(const struct stat& in) {
  return "{\"dibs_journal\":1,\"input_size\":" + std::to_string(in.st_size) + ",\"input_mtime_ns\":" +
         std::to_string(static_cast<long long>(in.st_mtim.tv_sec) * 1'000'000'000LL + in.st_mtim.tv_nsec) + "}";
}

// Reads the journal's records; `valid_end` is where its last complete record ends (a killed
// writer may have left half a line after it).
std::vector<journal_record> read_journal(const std::string& path, const std::string& expected_header,
                                         std::uint64_t& valid_end) {
  std::vector<journal_record> records;
  valid_end = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return records;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  simdjson::dom::parser parser;
  std::size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // half a record: the writer was killed mid-write
    const std::string_view line(text.data() + pos, nl - pos);
    if (first) {
      if (line != expected_header)
        throw std::runtime_error("the journal " + path + " belongs to another version of the input (" + std::string(line) +
                                 " vs " + expected_header + "): remove it to start over");
      first = false;
    } else {
      simdjson::dom::element rec;
      std::uint64_t n = 0;
      if (parser.parse(line.data(), line.size()).get(rec) || rec["line"].get_uint64().get(n)) {
        if (text.find('\n', nl + 1) == std::string::npos && nl + 1 >= text.size()) break;  // the torn last record
        throw std::runtime_error("the journal " + path + " is damaged at byte " + std::to_string(pos));
      }
      simdjson::dom::element ignored;
      records.push_back({static_cast<std::size_t>(n), !rec["result"].get(ignored), pos, line.size()});
    }
    pos = nl + 1;
    valid_end = pos;
  }
  return records;
}

memory_store_options memory_options(const jsonl_options& o) {
  memory_store_options m;
  m.source_field = o.source;
  m.target_field = o.target;
  m.keep_results = false;  // results go to the journal, not to memory
  return m;
}
}  // namespace

jsonl_store::jsonl_store(jsonl_options opts) : blocking_store(1), opts_(std::move(opts)), mem_(memory_options(opts_)) {
  if (opts_.target.find('.') != std::string::npos)
    throw std::invalid_argument("--target '" + opts_.target + "': file mode writes a top-level field");
  struct stat in_stat {};
  const bool have_in = ::stat(opts_.in.c_str(), &in_stat) == 0;
  if (!have_in && !opts_.read_only) fail_file("cannot read the input", opts_.in);
  const std::string journal = opts_.out + ".journal";

  std::unordered_map<std::size_t, bool> finished;  // line -> done (true) or failed
  if (!opts_.out.empty() && have_in) {
    if (!opts_.read_only && ::access(opts_.out.c_str(), F_OK) == 0 && ::access(journal.c_str(), F_OK) != 0)
      throw std::runtime_error("the output " + opts_.out + " exists (a finished run?): remove it or choose another --out");
    std::uint64_t valid_end = 0;
    for (const auto& r : read_journal(journal, header_of(in_stat), valid_end)) finished[r.line] = r.done;
    if (!opts_.read_only) {
      journal_fd_ = ::open(journal.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (journal_fd_ < 0) fail_file("cannot open the journal", journal);
      if (::flock(journal_fd_, LOCK_EX | LOCK_NB) != 0)
        throw std::runtime_error("another dibs run is using " + journal + " (it is locked)");
      if (valid_end == 0) {  // new: the header first
        if (::ftruncate(journal_fd_, 0) != 0) fail_file("cannot truncate", journal);
        ::lseek(journal_fd_, 0, SEEK_SET);
        append_journal(header_of(in_stat) + "\n");
      } else {  // drop a torn last record, then append after the last good one
        if (::ftruncate(journal_fd_, static_cast<off_t>(valid_end)) != 0) fail_file("cannot truncate", journal);
        ::lseek(journal_fd_, 0, SEEK_END);
      }
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
  od::parser parser;
  std::string line, bad_lines;
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
      bad_lines += "{\"line\":" + std::to_string(n) + ",\"failed\":{\"reason\":" + json_string(why) +
                   ",\"httpStatus\":0,\"attempts\":0}}\n";
      ++finished_before_;
      ++failed_before_;
      continue;
    }
    job_field f;
    od::value v;
    od::json_type vt{};
    std::string_view s;
    if (doc.at_pointer(pointer).get(v) || v.type().get(vt)) {
      f.st = job_field::state::missing;
    } else if (vt != od::json_type::string) {
      f.st = job_field::state::not_string;
      f.type_name = type_name(vt);
    } else if (v.get_string().get(s)) {
      f.st = job_field::state::not_string;
      f.type_name = "an invalid string";
    } else {
      f.st = job_field::state::string;
      f.value = std::string(s);
    }
    mem_.add(std::move(f));
    line_of_.push_back(n);
  }
  if (!bad_lines.empty() && journal_fd_ >= 0) append_journal(bad_lines);
}

void jsonl_store::count_finished_output() {
  std::ifstream out(opts_.out, std::ios::binary);
  simdjson::dom::parser parser;
  std::string line;
  while (std::getline(out, line)) {
    if (blank(line)) continue;
    simdjson::dom::element doc, failed;
    const bool is_failed = !parser.parse(line).get(doc) && !doc["failed"].get(failed);
    ++finished_before_;
    ++(is_failed ? failed_before_ : done_before_);
  }
}

jsonl_store::~jsonl_store() {
  join_pool();
  if (journal_fd_ >= 0) ::close(journal_fd_);
}

void jsonl_store::append_journal(const std::string& records) {
  std::lock_guard lock(journal_mutex_);
  const char* p = records.data();
  std::size_t left = records.size();
  while (left > 0) {
    const auto n = ::write(journal_fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_file("cannot write the journal", opts_.out + ".journal");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fdatasync(journal_fd_) != 0) fail_file("cannot sync the journal", opts_.out + ".journal");
}

// Items are known to the engine (and in logs) by their line number; the memory store inside
// numbers them 1..k in the same order, so the two translate by a search in line_of_.
std::string jsonl_store::memory_id(const std::string& line) const {
  const auto n = std::stoul(line);
  const auto it = std::lower_bound(line_of_.begin(), line_of_.end(), n);
  if (it == line_of_.end() || *it != n) return "0";  // no such item: the memory store reports it lost
  return std::to_string(it - line_of_.begin() + 1);
}

std::string jsonl_store::line_id(const std::string& memory) const { return std::to_string(line_of_[std::stoul(memory) - 1]); }

template <class Item>
std::vector<Item> jsonl_store::to_memory(std::vector<Item> batch) const {
  for (auto& x : batch) x.ref.id = memory_id(x.ref.id);
  return batch;
}

std::vector<job> jsonl_store::claim_blocking(const claim_request& req) {
  auto jobs = mem_.claim_now(req);
  for (auto& j : jobs) j.id = line_id(j.id);
  return jobs;
}

renew_result jsonl_store::renew_blocking(const std::vector<renewal>& batch, millis lease) {
  auto r = mem_.renew_now(to_memory(batch), lease);
  for (auto& id : r.lost) id = line_id(id);
  return r;
}

write_result jsonl_store::release_blocking(const std::vector<release_item>& batch) {
  auto r = mem_.release_now(to_memory(batch));
  for (auto& id : r.lost) id = line_id(id);
  return r;
}

namespace {
template <class Item>
std::vector<const Item*> landed(const std::vector<Item>& batch, const write_result& r) {
  const std::unordered_set<std::string> lost(r.lost.begin(), r.lost.end());
  std::vector<const Item*> out;
  for (const auto& x : batch)
    if (!lost.count(x.ref.id)) out.push_back(&x);
  return out;
}
}  // namespace

write_result jsonl_store::complete_blocking(const std::vector<completion>& batch) {
  auto r = mem_.complete_now(to_memory(batch));
  for (auto& id : r.lost) id = line_id(id);
  std::string records;
  for (const auto* c : landed(batch, r)) records += "{\"line\":" + c->ref.id + ",\"result\":" + c->result_json + "}\n";
  if (!records.empty()) append_journal(records);  // acknowledged only once it is on disk
  return r;
}

write_result jsonl_store::fail_blocking(const std::vector<failure>& batch) {
  auto r = mem_.fail_now(to_memory(batch));
  for (auto& id : r.lost) id = line_id(id);
  std::string records;
  for (const auto* f : landed(batch, r))
    records += "{\"line\":" + f->ref.id + ",\"failed\":{\"reason\":" + json_string(f->reason) +
               ",\"httpStatus\":" + std::to_string(f->http_status) + ",\"attempts\":" + std::to_string(f->attempts) + "}}\n";
  if (!records.empty()) append_journal(records);
  return r;
}

store_stats jsonl_store::stats_blocking() {
  auto s = mem_.stats_now();
  s.done += done_before_;
  s.failed += failed_before_;
  return s;
}

std::size_t jsonl_store::seed(std::size_t n, std::uint64_t seed) {
  if (opts_.source.find('.') != std::string::npos)
    throw std::invalid_argument("seeding a file writes a top-level --source, not '" + opts_.source + "'");
  std::ofstream out(opts_.in, std::ios::app | std::ios::binary);
  if (!out) fail_file("cannot append to", opts_.in);
  std::mt19937_64 rng(seed);
  const auto key = json_string(opts_.source);
  for (std::size_t i = 0; i < n; ++i) out << '{' << key << ":\"" << ipv4_to_string(random_public_ipv4(rng)) << "\"}\n";
  out.flush();
  if (!out) fail_file("cannot write", opts_.in);
  return n;
}

std::string jsonl_store::describe() const {
  return "jsonl " + opts_.in + (opts_.out.empty() ? "" : " -> " + opts_.out);
}

std::string jsonl_store::finish(bool drained) {
  const std::string journal = opts_.out + ".journal";
  if (opts_.read_only || journal_fd_ < 0) return {};
  if (!drained)
    return "finished lines are kept in " + journal + "; run the same command again to do the rest";

  struct stat in_stat {};
  if (::stat(opts_.in.c_str(), &in_stat) != 0) fail_file("cannot read the input", opts_.in);
  std::uint64_t valid_end = 0;
  std::vector<journal_record> index;  // by line number
  for (auto& r : read_journal(journal, header_of(in_stat), valid_end)) {
    if (index.size() <= r.line) index.resize(r.line + 1);
    index[r.line] = r;
  }
  std::ifstream in(opts_.in, std::ios::binary);
  std::ifstream records(journal, std::ios::binary);
  const std::string tmp = opts_.out + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!in || !records || !out) fail_file("cannot write the output", tmp);

  std::string line, rec;
  std::size_t written = 0, done = 0, failed = 0;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (blank(line)) continue;
    if (n >= index.size() || index[n].line != n)
      throw std::runtime_error("line " + std::to_string(n) + " of " + opts_.in + " has no outcome in the journal");
    const auto& r = index[n];
    rec.resize(r.length);
    records.seekg(static_cast<std::streamoff>(r.offset));
    records.read(rec.data(), static_cast<std::streamsize>(r.length));
    const std::string prefix = "{\"line\":" + std::to_string(n) + (r.done ? ",\"result\":" : ",\"failed\":");
    const std::string body = rec.substr(prefix.size(), rec.size() - prefix.size() - 1);  // without the final }
    std::string merged = r.done ? with_field(line, opts_.target, body) : with_field(line, opts_.target, "null", "\"failed\":" + body);
    if (merged.empty())  // the line was not an object: say which line it was, and keep its text
      merged = "{\"line\":" + std::to_string(n) + ",\"input\":" + json_string(line) + "," + json_string(opts_.target) +
               ":null,\"failed\":" + body + "}";
    out << merged << '\n';
    ++written;
    ++(r.done ? done : failed);
  }
  out.flush();
  out.close();
  if (!out) fail_file("cannot write the output", tmp);
  if (std::rename(tmp.c_str(), opts_.out.c_str()) != 0) fail_file("cannot rename the output to", opts_.out);
  ::unlink(journal.c_str());
  return "wrote " + opts_.out + ": " + std::to_string(written) + " lines (" + std::to_string(done) + " done, " +
         std::to_string(failed) + " failed), in the input's order";
}

}  // namespace dibs::jsonl
