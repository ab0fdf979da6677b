// File mode: a JSON Lines file as the store (`store jsonl:IN.jsonl out OUT.jsonl`).
//
// Every non-empty line of IN is an item; its source field is read from the line's object. The
// claim protocol runs in memory (a memory_store: leases, tokens, attempts, retries), and every
// outcome that lands is appended to a journal, OUT.journal, before the write is acknowledged
// (write + fdatasync per batch). The journal is the checkpoint: a run that is killed loses
// nothing that was acknowledged, and the next run with the same files skips every line the
// journal holds and does the rest. When every line is done or failed, OUT is written in IN's
// order, atomically (OUT.tmp, then a rename), and the journal is removed: each line as the user
// wrote it with only the target's value set in place (or added last), or with dibs's record of
// its failure under "_dibs" (json_members.hpp); a line whose target already holds a value is
// done before dibs starts and is written out byte for byte.
//
// Items are known by their line number (in logs, `dibs status`'s examples, GET /status), or with
// id_field NAME (jsonl_options::id_field) by the value of their member NAME (line_keys.hpp);
// the output's and the journal's records always say the line number.
// One process at a time: the journal is locked (flock). The journal records IN's size and
// modification time; a journal for another IN is refused rather than misapplied.
#pragma once

#include <dibs/ipapi/recipe_fields.hpp>
#include <dibs/stores/line_keys.hpp>
#include <dibs/stores/memory_store.hpp>

#include <dibs/blocking_store.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dibs::jsonl {

class journal_file;  // the journal's file (journal_file.hpp): not part of the installed API
struct line_outcome;  // failed_lines.hpp (internal)

struct jsonl_options {
  std::string in;   // the input file
  std::string out;  // the output file; the journal is out + ".journal"
  std::string source = dibs::ipapi::source_field;  // a top-level field, or a dotted path
  std::string target = dibs::ipapi::target_field;
  // The target was given by the user: a journal whose run writes another is refused (else the
  // journal's target is the one in effect: `dibs status`, `retry` and `release` need no target).
  bool target_given = false;
  bool read_only = false;  // `dibs status`: no lock, no journal created
  std::string id_field;    // a top-level member whose value names each line; "" = line numbers
  // More fields (dotted paths) each item hands the processor: a request's headers and body.
  std::vector<std::string> more_fields;
  // map's fields: a done line gets each member of its answer (the mapped values) as a
  // top-level member of its own too.
  std::vector<std::string> mapped_fields;
};

class jsonl_store final : public blocking_store {
 public:
  // Reads IN and the journal; throws std::runtime_error naming the file when it can't.
  explicit jsonl_store(jsonl_options opts);
  ~jsonl_store() override;

  std::vector<job> claim_blocking(const claim_request& req) override;
  write_result complete_blocking(const std::vector<completion>& batch) override;
  renew_result renew_blocking(const std::vector<renewal>& batch, millis lease) override;
  write_result release_blocking(const std::vector<release_item>& batch) override;
  write_result fail_blocking(const std::vector<failure>& batch) override;
  store_stats stats_blocking() override;
  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  std::size_t seed_skewed(std::size_t n, std::uint64_t seed, std::size_t distinct) override;
  std::vector<pending_sample> sample_pending_items(std::size_t n) override;
  std::optional<pending_sample> sample_done() override;
  std::string describe() const override;
  std::string finish(bool drained) override;
  // `dibs retry` (jsonl_retry.cpp, failed_lines.hpp): a retry record per failed line it puts
  // back, in the journal; after a finished run, a new journal made from OUT. `since` is refused:
  // the journal records no failure times.
  std::uint64_t retry_failed(const retry_filter& which) override;
  std::vector<failure_reason> failure_reasons(std::size_t top) override;
  // `dibs failed` (jsonl_failed.cpp): the failed lines the journal or a finished OUT records, with
  // their source read from IN; no time (the journal records none: `since` is refused).
  void list_failed(const retry_filter& which, const std::function<void(const failed_item&)>& each) override;
  // The journal's (or a finished OUT's) answers that are the API's "no data" (failed_lines.hpp).
  std::optional<std::uint64_t> no_data_count() override;
  // The leases live in this process's memory only (the journal records outcomes, not claims): a
  // run's GET /workers and POST /release see them; another process (`dibs status`) sees none,
  // and a process that died took its leases with it.
  std::vector<lease_holder> lease_holders() override;
  std::uint64_t release_worker(const std::string& name) override;

  std::size_t lines() const { return line_of_.size() + finished_before_; }
  std::size_t resumed() const { return finished_before_; }  // lines the journal already held

 private:
  bool journaling() const;
  // Whether the memory store would accept a fenced write for `ref` (a memory id) at `now`.
  bool holds(const lease_ref& ref, store_time now, bool check_until) const;
  // The outcomes recorded so far: the journal's, or a finished OUT's (failed_lines.hpp).
  std::vector<line_outcome> recorded_outcomes();
  std::string write_output(const std::string& journal_text);
  std::string output_line(std::size_t n, const std::string& line, bool done, std::string_view body) const;
  // The line's target holds a value of the user's (anything but null): the line is done.
  bool target_set(const std::string& line) const;
  void count_finished_output();
  // The target the journal records (a run's own): taken when none was given, refused when another was.
  void adopt_target(const std::optional<std::string>& recorded, const std::string& journal);
  // A finished run's journal (which named its target) is gone: with no target given, the member
  // OUT's done lines added is taken as the run's (said). False when there is none to take.
  bool target_from_output();
  // The outcomes a finished OUT holds, read with the run's target (target_from_output's if need be).
  std::vector<line_outcome> finished_outcomes();
  // The journal's header for IN as it is now, with the target in effect.
  std::string journal_header_for_run() const;
  // The lines that failed as IN was read, into the journal (with the first outcome written, or at the end).
  void journal_unjournaled();
  // Removes a journal this store made and recorded nothing in (a refused run leaves no file).
  void drop_unused_journal();
  std::string memory_id(const std::string& name) const;
  std::string line_id(const std::string& memory) const;
  // What the engine and the user call line `n` (its number, or its id_field key), and back (0: none).
  std::string name_of_line(std::size_t n) const;
  std::size_t line_named(const std::string& name) const;
  template <class Item>
  std::vector<Item> to_memory(std::vector<Item> batch) const;
  // complete and fail: checked, journaled, then applied to memory (jsonl_store.cpp).
  template <class Item, class Record, class Apply>
  write_result journal_then_apply(const std::vector<Item>& batch, bool check_until, Record record_of, Apply apply);

  jsonl_options opts_;
  // The memory store's clock: frozen while a batch that was checked and journaled at `now` is
  // applied, so that memory accepts exactly what the journal already holds.
  std::optional<store_time> frozen_now_;
  memory_store mem_;
  std::vector<std::size_t> line_of_;  // memory id - 1 -> line number (1-based) in IN
  line_keys keys_;                    // with id_field: each object line's key
  std::size_t finished_before_ = 0;
  std::uint64_t done_before_ = 0, failed_before_ = 0;
  // Lines that are not JSON objects, failed while reading IN and not yet in the journal (line,
  // reason), and their records: journaled with the first outcome, so a run refused before it
  // leaves no journal behind.
  std::vector<std::pair<std::size_t, std::string>> unjournaled_failures_;
  std::string unjournaled_records_;
  std::size_t unjournaled_count_ = 0;
  std::size_t first_done_line_ = 0;  // a line done before this start (the pre-flight's sample_done), 0: none
  bool journal_made_here_ = false;    // the journal was not there before this store
  bool journal_has_records_ = false;  // ... and it holds an outcome
  std::unique_ptr<journal_file> journal_;
  std::mutex op_mutex_;  // one operation at a time: check, journal, apply
};

}  // namespace dibs::jsonl
