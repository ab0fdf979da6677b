// The flags that name a store and its fields, shared by `enrich`, `seed` and `status`; the store
// itself comes from open_store (adapters/stores: the URI grammar is there, not here).
#pragma once

#include <dibs/admin_store.hpp>

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}

namespace dibs::cli {

struct store_flags {
  std::string store;
  std::string password_file;  // the database password's file (store_password.hpp)
  std::string out;  // file mode
  std::string out_flag = "--out";  // what add_to named it: messages asking for it say this name
  std::string id_field;  // file mode: the member that names each line (--id-field); "" = line numbers
  std::string db;          // "" = the URI's path, else test
  std::string collection;  // "" = the URI's collection=, else message
  std::string source = "originatingIp";
  // More fields each item brings (enrich: the ones --header and --body read beside the source).
  std::vector<std::string> more_fields;
  std::vector<std::string> mapped_fields;  // enrich: --map's
  // --map's text (dibs/field_mapping.hpp; enrich and init), and whether the user gave it: one not
  // given is dibs init's record, if any (open() says it here afterwards, and its names above).
  std::string map;
  bool map_given = false;
  std::string target = "location";
  std::string lock_field = "_dibs";
  std::string claim = "batch";
  // 0: one per shard that will use the store (`shards`), at most 4. Each is a connection held
  // for the run; eight processes with four each oversubscribe a small server (README, Scale out).
  std::size_t db_threads = 0;
  std::size_t shards = 1;  // set by a command that runs an engine, before open()
  std::string on_done = "mark";
  bool new_target = false;  // --new-target: no document has the target yet (MongoDB), no column of that name (SQL, dibs init)
  bool new_table = false;   // --new-table (dibs init): the table or collection --store names is new
  // The column the store reads was chosen by a flag other than --source (enrich: --url's {field}).
  bool source_chosen = false;

  // `out_flag`: file mode's OUT by another name, for a command whose own --out is something else
  // (`dibs failed --out FILE` writes the failed lines there: the run's OUT is --run-out).
  void add_to(CLI::App& cmd, bool with_claim, const char* out_flag = "--out");
  // --db-threads, or the default for `shards`.
  std::size_t threads() const;
  // True when --store names a JSON Lines file (file mode).
  bool file_mode() const;
  // --store with the password from --password-file or the environment put in (store_password.hpp).
  std::string uri_to_connect() const;
  // What opening may do to the table (MongoDB: the collection) --store names: `existing` only
  // uses it, refusing a missing one by name (with the closest existing name) and one that lacks
  // dibs's columns with the ALTER TABLE; `create` creates a missing one (dibs seed); `prepare`
  // (dibs init) creates a missing one only with --new-table, and adds dibs's columns and index to
  // an existing table (its --target column only with --new-target).
  // The flag that named the column the store reads (enrich: --url when its {field} chose it).
  std::string source_flag = "--source";
  enum class table_use { existing, create, prepare };
  // Opens the store (connects; MongoDB: measures the clock, creates indexes, unless
  // create_schema is false: dibs status). Throws with a clear message that never shows the password.
  // With dibs init's record (dibs/recorded_settings.hpp): --source, --target, --lock-field and
  // --on-done not given take the recorded values (and this object says them afterwards); one
  // given that contradicts the record is refused, both values named. `dibs init` records them.
  std::shared_ptr<admin_store> open(bool create_schema = true, table_use use = table_use::existing);

 private:
  // The settings the user gave on the command line (by the names the record keeps).
  std::vector<std::string> given_settings() const;
  CLI::Option* source_opt_ = nullptr;
  CLI::Option* target_opt_ = nullptr;
  CLI::Option* lock_field_opt_ = nullptr;
  CLI::Option* claim_opt_ = nullptr;
  CLI::Option* on_done_opt_ = nullptr;
};

// --db-threads on `cmd` (dibs bench keeps its own store flags).
void add_db_threads_flag(CLI::App& cmd, std::size_t& db_threads);

}  // namespace dibs::cli
