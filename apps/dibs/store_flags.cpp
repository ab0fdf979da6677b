#include "store_flags.hpp"

#include "did_you_mean.hpp"
#include "file_mode_output.hpp"

#include <dibs/stores/open_store.hpp>
#include <adapters/stores/store_password.hpp>

#include <dibs/missing_table_error.hpp>
#include <dibs/field_mapping.hpp>
#include <dibs/recorded_settings.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <sys/stat.h>

namespace dibs::cli {

void store_flags::add_to(CLI::App& cmd, bool with_claim, const char* out_flag) {
  cmd.add_option("--store", store,
                 "the store: mongodb://HOST[:PORT]/DB?collection=COLLECTION (a standard MongoDB connection string), "
                 "mysql://USER:PASS@HOST:PORT/DB?table=TABLE, postgresql://USER:PASS@HOST:PORT/DB?table=TABLE, "
                 "or jsonl:IN.jsonl (a JSON Lines file; with " + std::string(out_flag) + "), or jsonl:- (stdin; with " +
                     std::string(out_flag) + " -)")
      ->type_name("URI")
      ->required();
  cmd.add_option("--password-file", password_file,
                 "the database password: the first line of this file (else DIBS_STORE_PASSWORD; mysql:// also "
                 "MYSQL_PWD; postgresql:// also PGPASSWORD and ~/.pgpass), so that it is not on the command line "
                 "for ps to show; a password in the URI and this flag together are refused")
      ->type_name("FILE");
  this->out_flag = out_flag;
  cmd.add_option(out_flag, out,
                 "file mode: where the enriched lines go (OUT.journal holds the progress); - with --store jsonl:- "
                 "writes them to stdout once every line is done (not resumable)")
      ->type_name("FILE");
  cmd.add_option("--id-field", id_field,
                 "file mode: name each line by the value of this top-level member (a string or a number, one per "
                 "line) in logs, status and /status, instead of its line number (tables are named by their key, "
                 "MongoDB documents by _id)")
      ->type_name("FIELD");
  cmd.add_option("--db", db, "MongoDB: database, overriding the URI's path (default: the path, else test)")->type_name("NAME");
  cmd.add_option("--collection", collection,
                 "MongoDB: collection, overriding the URI's collection= (default: collection=, else message)")
      ->type_name("NAME");
  source_opt_ = cmd.add_option("--source", source,
                                "field (column) read for the API call; MongoDB: dotted paths allowed (after dibs init: "
                                "what it recorded)")
                    ->type_name("FIELD")
                    ->capture_default_str();
  target_opt_ = cmd.add_option("--target", target,
                                "field (column) the API's answer is written to; null means pending, any other value "
                                "done (after dibs init: what it recorded)")
                    ->type_name("FIELD")
                    ->capture_default_str();
  lock_field_opt_ =
      cmd.add_option("--lock-field", lock_field,
                     "MongoDB: the field dibs keeps a document's lease and failure in (a collection an earlier dibs "
                     "worked on with its default, lock, goes on with lock)")
          ->type_name("FIELD")
          ->capture_default_str();
  on_done_opt_ = cmd.add_option("--on-done", on_done, "MySQL, PostgreSQL: mark (keep finished rows with their result) or delete (queue)")
                     ->type_name("mark|delete")
                     ->capture_default_str();
  cmd.add_flag("--new-target", new_target,
               "the --target field is new (MongoDB: no document has it yet; dibs init on a table: no column of that name "
               "yet); without it such a collection or table is refused, as a forgotten or misspelled --target would make "
               "every document pending again");
  if (with_claim)
    claim_opt_ = cmd.add_option("--claim", claim,
                   "claim strategy: MongoDB update-find, find-and-modify, batch, lock-collection; "
                   "MySQL and PostgreSQL skip-locked (their only one)")
        ->type_name("STRATEGY")
        ->capture_default_str();
  add_db_threads_flag(cmd, db_threads);
}

void add_db_threads_flag(CLI::App& cmd, std::size_t& db_threads) {
  cmd.add_option("--db-threads", db_threads,
                 "threads (and pooled connections) for database calls; default one per shard, at most 4")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
}

std::size_t store_flags::threads() const { return db_threads ? db_threads : std::clamp<std::size_t>(shards, 1, 4); }

bool store_flags::file_mode() const { return parse_store_uri(store).kind == store_kind::jsonl; }

std::string store_flags::uri_to_connect() const {
  password_sources from;
  if (!password_file.empty()) from.file = read_password_file(password_file);
  if (const char* v = std::getenv("DIBS_STORE_PASSWORD"); v && *v) from.dibs_env = v;
  if (const char* v = std::getenv("MYSQL_PWD"); v && *v) from.mysql_env = v;
  return with_store_password(store, from);
}

std::vector<std::string> store_flags::given_settings() const {
  std::vector<std::string> given;
  auto note = [&](const CLI::Option* opt, const char* name) {
    if (opt && opt->count() > 0) given.emplace_back(name);
  };
  note(source_opt_, "source");
  if (source_chosen && (!source_opt_ || source_opt_->count() == 0)) given.emplace_back("source");
  note(target_opt_, "target");
  note(lock_field_opt_, "lock_field");
  note(claim_opt_, "claim");
  note(on_done_opt_, "on_done");
  if (map_given) given.emplace_back("map");
  return given;
}

namespace {
std::string flag_of(const std::string& setting) {
  std::string flag = "--" + setting;
  for (auto& c : flag)
    if (c == '_') c = '-';
  return flag;
}
}  // namespace

std::shared_ptr<admin_store> store_flags::open(bool create_schema, table_use use) {
  store_options o;
  o.settings.read = true;
  o.settings.given = given_settings();
  o.settings.record = use == table_use::prepare;
  o.target_is_new = new_target;
  o.source = source;
  o.more_fields = more_fields;
  o.mapped_fields = mapped_fields;
  o.map = map;
  o.target = target;
  o.lock_field = lock_field;
  o.claim = claim;
  o.on_done = on_done;
  o.out = out;
  if (!id_field.empty() && !file_mode())
    throw std::invalid_argument("--id-field " + id_field + " names the lines of a file (--store jsonl:IN): a table's "
                                "rows are named by its own key, and MongoDB's documents by _id");
  o.id_field = id_field;
  o.database = db;
  o.collection = collection;
  o.threads = threads();
  o.create_schema = create_schema;
  o.create_table = use == table_use::create || (use == table_use::prepare && new_table);
  o.add_columns = use == table_use::prepare;
  // A file to read that is not there (dibs seed makes one): said with the one probably meant.
  // (stdin, and --out - with a file, are the store's to refuse: they name no file to look for.)
  if (use != table_use::create && file_mode() && out != "-") {
    const auto path = parse_store_uri(store).path;
    struct stat st {};
    if (path != "-" && ::stat(path.c_str(), &st) != 0) throw std::invalid_argument(no_input_file(store, path));
  }
  try {
    auto st = open_store(uri_to_connect(), o);
    // What the store used: the record's values where no flag was given.
    for (const auto& [name, value] : o.settings.result->in_effect) {
      if (name == "source") source = value;
      else if (name == "target") target = value;
      else if (name == "lock_field") lock_field = value;
      else if (name == "on_done") on_done = value;
      else if (name == "map" && !map_given) {
        map = value;
        mapped_fields.clear();
        for (const auto& part : split_mapping(value, "--map", false)) mapped_fields.push_back(part.name);
      }
    }
    return st;
  } catch (const setting_conflict& e) {
    const auto flag = flag_of(e.name);
    const auto change = "dibs init with " + flag + " " + e.given + " records the new one";
    if (e.name == "source" && source_flag == "--url")
      throw std::invalid_argument("--url reads the field '" + e.given + "', but dibs init recorded " + flag + " " + e.recorded +
                                  " for " + e.where + " (write {" + e.recorded + "} in --url; " + change + ")");
    throw std::invalid_argument(flag + " " + e.given + " contradicts what dibs init recorded for " + e.where + ": " + flag +
                                " " + e.recorded + " (leave " + flag + " out to use it; " + change + ")");
  } catch (const missing_table_error& e) {
    if (e.kind == "field") {  // MongoDB: no document has the target
      // A typo of a field that holds answers, else the one field that could (e.existing).
      auto near = nearest_name(e.name, e.existing);
      if (!near && e.existing.size() == 1) near = e.existing.front();
      throw std::invalid_argument("--target " + e.name + ": no document of " + e.where +
                                  " has this field, so every document would count as pending and be sent to the API "
                                  "again" + (near ? "; did you mean '" + *near + "'?" : std::string()) + " (" + e.advice + ")");
    }
    if (e.kind == "target column") {  // SQL: the table has no column of that name
      const auto near = nearest_name(e.name, e.existing);
      throw std::invalid_argument("--target " + e.name + ": " + e.where +
                                  " has no such column, so every row would count as pending and be sent to the API "
                                  "again" + (near ? "; did you mean '" + *near + "'?" : std::string()) + " (" + e.advice + ")");
    }
    if (e.kind == "column") {
      const auto near = nearest_name(e.name, e.existing);
      throw std::invalid_argument(source_flag + " reads the field '" + e.name + "', but " + e.where +
                                  " has no such column" + (near ? "; did you mean '" + *near + "'?" : std::string()) +
                                  " (" + e.advice + ")");
    }
    // The store knows what exists; the name the user probably meant is the CLI's to pick.
    throw std::invalid_argument(e.message(nearest_name(e.name, e.existing)));
  }
}

}  // namespace dibs::cli
