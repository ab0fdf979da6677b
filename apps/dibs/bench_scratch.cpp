#include "bench_scratch.hpp"

#include "bench_figures.hpp"

#include <adapters/mongo/test_hooks.hpp>
#include <dibs/stores/open_store.hpp>
#include <dibs/stores/store_console.hpp>

#include <dibs/missing_table_error.hpp>

#include <stdexcept>

namespace dibs::cli {

namespace {

const std::string marker_text = "dibs bench scratch";
const std::string marker_id = "dibs_bench_marker";

std::string with_table(const std::string& uri, const std::string& name) {
  return uri + (uri.find('?') == std::string::npos ? "?" : "&") + "table=" + name;
}

// The SQL stores run the scratch's own statements (store_console.hpp).
sql_console& sql(admin_store& st) { return dynamic_cast<sql_console&>(st); }

// MySQL/MariaDB: the marker is the table's comment. (Names are scratch names, [a-z0-9_], checked
// before any statement is made of them.)
class mysql_scratch final : public bench_scratch {
 public:
  using bench_scratch::bench_scratch;

 private:
  bool has_marker(admin_store& looking, const std::string& name) override {
    return sql(looking).query_value("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
                                    "AND TABLE_NAME = '" + name + "'") == marker_text;
  }
  void mark(admin_store& st, const std::string& name) override {
    sql(st).execute("ALTER TABLE `" + name + "` COMMENT = '" + marker_text + "'");
  }
  void drop_table(admin_store& looking, const std::string& name) override {
    sql(looking).execute("DROP TABLE IF EXISTS `" + name + "`");
  }
  std::vector<std::string> candidates() override { return listed_by_refusal(); }
};

// PostgreSQL: the marker is the table's comment; the store's notify function goes with it.
class pg_scratch final : public bench_scratch {
 public:
  using bench_scratch::bench_scratch;

 private:
  bool has_marker(admin_store& looking, const std::string& name) override {
    return sql(looking).query_value("SELECT obj_description(to_regclass('\"" + name + "\"'), 'pg_class')") == marker_text;
  }
  void mark(admin_store& st, const std::string& name) override {
    sql(st).execute("COMMENT ON TABLE \"" + name + "\" IS '" + marker_text + "'");
  }
  void drop_table(admin_store& looking, const std::string& name) override {
    sql(looking).execute("DROP TABLE IF EXISTS \"" + name + "\"; DROP FUNCTION IF EXISTS \"" + name + "_dibs_notify\"()");
  }
  std::vector<std::string> candidates() override { return listed_by_refusal(); }
};

// MongoDB: the marker is a document whose target is set (never claimed).
class mongo_scratch final : public bench_scratch {
 public:
  using bench_scratch::bench_scratch;

 private:
  static mongo::mongo_store& db(admin_store& st) { return dynamic_cast<mongo::mongo_store&>(st); }
  bool has_marker(admin_store& looking, const std::string& name) override {
    const auto reply = mongo::from_json(mongo::run_command(
        db(looking), R"({"find": ")" + name + R"(", "filter": {"_id": ")" + marker_id + R"("}, "limit": 1})"));
    bson_iter_t it, batch;
    return bson_iter_init(&it, reply.get()) && bson_iter_find_descendant(&it, "cursor.firstBatch", &batch) &&
           BSON_ITER_HOLDS_ARRAY(&batch) && bson_iter_recurse(&batch, &it) && bson_iter_next(&it);
  }
  void mark(admin_store& st, const std::string& name) override {
    mongo::run_command(db(st), R"({"insert": ")" + name + R"(", "documents": [{"_id": ")" + marker_id + R"(", ")" +
                                   flags_.target + R"(": {"dibs_bench": "scratch"}}]})");
  }
  void drop_table(admin_store& looking, const std::string& name) override {
    for (const auto& coll : {name + ".lock", name}) {
      try {
        mongo::run_command(db(looking), R"({"drop": ")" + coll + R"("})");
      } catch (const mongo::mongo_error& e) {
        if (e.code != 26) throw;  // NamespaceNotFound: servers before 7.0 say so for a missing one
      }
    }
  }
  std::vector<std::string> candidates() override {
    const auto looking = look_at("dibs_bench_listing");
    const auto reply = mongo::from_json(mongo::run_command(db(*looking), R"({"listCollections": 1, "nameOnly": true})"));
    std::vector<std::string> out;
    bson_iter_t it, batch, doc;
    if (bson_iter_init(&it, reply.get()) && bson_iter_find_descendant(&it, "cursor.firstBatch", &batch) &&
        bson_iter_recurse(&batch, &it))
      while (bson_iter_next(&it))
        if (BSON_ITER_HOLDS_DOCUMENT(&it) && bson_iter_recurse(&it, &doc) && bson_iter_find(&doc, "name") &&
            BSON_ITER_HOLDS_UTF8(&doc))
          out.emplace_back(bson_iter_utf8(&doc, nullptr));
    return out;
  }
};

}  // namespace

bench_scratch::bench_scratch(store_flags flags) : flags_(std::move(flags)), kind_(parse_store_uri(flags_.store).kind) {}

std::shared_ptr<admin_store> bench_scratch::open_with(const std::string& name, const std::string& strategy, bool create) {
  store_options o;
  o.source = flags_.source;
  o.target = flags_.target;
  o.lock_field = flags_.lock_field;
  o.claim = strategy;
  o.threads = flags_.threads();
  o.database = flags_.db;
  o.create_schema = create;
  o.create_table = create;
  o.count_commands = create;  // the run's store; a look needs no counting
  std::string uri = flags_.uri_to_connect();
  if (kind_ == store_kind::mongodb) {
    o.collection = name;
    // Looking at a missing collection is no error (its look finds no marker); nothing is made.
    o.create_table = true;
  } else {
    uri = with_table(uri, name);
  }
  return open_store(uri, o);
}

std::shared_ptr<admin_store> bench_scratch::look_at(const std::string& name) { return open_with(name, "batch", false); }

std::vector<std::string> bench_scratch::listed_by_refusal() {
  try {
    look_at("dibs_bench_listing");
  } catch (const missing_table_error& e) {
    return e.existing;
  }
  return {};
}

bool bench_scratch::is_marked(const std::string& name) {
  if (!is_scratch_name(name)) return false;
  try {
    const auto looking = look_at(name);
    return has_marker(*looking, name);
  } catch (const missing_table_error&) {
    return false;  // no such table, or one without dibs's source column
  } catch (const std::invalid_argument&) {
    return false;  // a table without dibs's other columns: a user's, refused with the ALTER TABLE
  }
}

std::shared_ptr<admin_store> bench_scratch::create(const std::string& name, std::size_t docs, const std::string& strategy) {
  if (!is_scratch_name(name)) throw std::invalid_argument("'" + name + "' is not a dibs bench scratch name");
  auto st = open_with(name, strategy, true);
  mark(*st, name);
  if (docs > 0) st->seed(docs, 7);
  return st;
}

std::shared_ptr<admin_store> bench_scratch::open(const std::string& name, const std::string& strategy) {
  if (!is_marked(name))
    throw std::invalid_argument("'" + name + "' in " + where() +
                                " is not a scratch table dibs bench made (no dibs_bench_ name or no marker): not touched");
  // The store opened for the run may create its claim indexes: only now, on a marked scratch.
  auto st = open_with(name, strategy, true);
  return st;
}

bool bench_scratch::drop(const std::string& name) {
  if (!is_marked(name)) return false;
  drop_table(*look_at(name), name);
  return true;
}

std::vector<std::string> bench_scratch::leftovers() {
  std::vector<std::string> out;
  for (const auto& name : candidates())
    if (is_marked(name)) out.push_back(name);
  return out;
}

std::string bench_scratch::where() const {
  const auto u = parse_store_uri(flags_.store);
  if (kind_ == store_kind::mongodb) return "database " + (!flags_.db.empty() ? flags_.db : !u.database.empty() ? u.database : "test");
  if (kind_ == store_kind::postgresql) {
    // libpq reads the path; here it only names the place.
    const auto& rest = u.after_hosts;
    const auto db = rest.empty() || rest[0] != '/' ? std::string() : rest.substr(1, rest.find('?') - 1);
    return db.empty() ? std::string("the default database") : "database " + db;
  }
  return "database " + u.database;
}

std::optional<std::uint64_t> statements_sent(const admin_store& st) {
  if (const auto* counted = dynamic_cast<const counted_statements*>(&st)) return counted->statements_sent();
  return std::nullopt;
}

std::unique_ptr<bench_scratch> make_bench_scratch(const store_flags& flags) {
  switch (parse_store_uri(flags.store).kind) {
    case store_kind::mysql: return std::make_unique<mysql_scratch>(flags);
    case store_kind::postgresql: return std::make_unique<pg_scratch>(flags);
    case store_kind::mongodb: return std::make_unique<mongo_scratch>(flags);
    case store_kind::jsonl: break;
  }
  throw std::invalid_argument("--store: dibs bench is not for files (jsonl:): it measures a database server; "
                              "give a mongodb://, mysql:// or postgresql:// URI");
}

}  // namespace dibs::cli
