// `store jsonl:- out -`: file mode in a pipeline. The items are read from stdin and the
// enriched lines written to stdout, in stdin's order, once every line is done or failed.
//
// Underneath it is the ordinary file mode (jsonl_store.hpp) on a private temporary directory
// (mkdtemp, mode 0700, under $TMPDIR or /tmp): stdin is copied there first, and the journal and
// the output live there too, and all of it is removed when the store goes. So it is NOT
// resumable: a run cut short (a signal, a crash) writes nothing to stdout, and its work is lost;
// the next run starts over. For resumable runs give files: store jsonl:IN.jsonl out OUT.jsonl.
#pragma once

#include <dibs/stores/jsonl_store.hpp>

#include <adapters/stores/forwarding_store.hpp>

#include <dibs/admin_store.hpp>

#include <memory>
#include <string>

namespace dibs::jsonl {

class piped_jsonl_store final : public forwarding_store<admin_store> {
 public:
  // `fields`: its source and target are used (in and out are the temporary files). Reads all of
  // stdin now; throws std::runtime_error when it can't (a full disk).
  explicit piped_jsonl_store(const jsonl_options& fields);
  ~piped_jsonl_store() override;

  // The engine's calls go to the file mode underneath (forwarding_store).
  std::string describe() const override;

  std::size_t seed(std::size_t n, std::uint64_t seed) override;
  store_stats stats_blocking() override;
  // Drained: the output, in stdin's order, to stdout. Not drained: nothing on stdout, and says so.
  std::string finish(bool drained) override;

 private:
  store& inner() const override { return *inner_; }
  std::string dir_;
  std::unique_ptr<jsonl_store> inner_;
};

}  // namespace dibs::jsonl
