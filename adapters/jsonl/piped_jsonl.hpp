// `--store jsonl:- --out -`: file mode in a pipeline. The items are read from stdin and the
// enriched lines written to stdout, in stdin's order, once every line is done or failed.
//
// Underneath it is the ordinary file mode (jsonl_store.hpp) on a private temporary directory
// (mkdtemp, mode 0700, under $TMPDIR or /tmp): stdin is copied there first, and the journal and
// the output live there too, and all of it is removed when the store goes. So it is NOT
// resumable: a run cut short (a signal, a crash) writes nothing to stdout, and its work is lost;
// the next run starts over. For resumable runs give files: --store jsonl:IN.jsonl --out OUT.jsonl.
#pragma once

#include <dibs/stores/jsonl_store.hpp>

#include <dibs/admin_store.hpp>

#include <memory>
#include <string>

namespace dibs::jsonl {

class piped_jsonl_store final : public admin_store {
 public:
  // `fields`: its source and target are used (in and out are the temporary files). Reads all of
  // stdin now; throws std::runtime_error when it can't (a full disk).
  explicit piped_jsonl_store(const jsonl_options& fields);
  ~piped_jsonl_store() override;

  awaitable<std::vector<job>> claim(claim_request req) override;
  awaitable<write_result> complete(std::vector<completion> batch) override;
  awaitable<renew_result> renew(std::vector<renewal> batch, millis lease) override;
  awaitable<write_result> release(std::vector<release_item> batch) override;
  awaitable<write_result> fail(std::vector<failure> batch) override;
  awaitable<store_stats> stats() override;
  std::string describe() const override;
  std::uint64_t claim_conflicts() const override;

  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  store_stats stats_blocking() override;
  // Drained: the output, in stdin's order, to stdout. Not drained: nothing on stdout, and says so.
  std::string finish(bool drained) override;

 private:
  std::string dir_;
  std::unique_ptr<jsonl_store> inner_;
};

}  // namespace dibs::jsonl
