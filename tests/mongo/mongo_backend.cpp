// MongoDB (the stand-in, or MONGODB_URI), as the conformance cases (tests/conformance/) see it:
// collections of the test database and dibs's mongo_store on them; no SQL.
#include "support/backend.hpp"
#include "support/mongo_collection.hpp"
#include "support/mongo_env.hpp"

#include <dibs/stores/mongo_store.hpp>
#include <adapters/mongo/test_hooks.hpp>

#include <regex>

namespace dibs::test {

const backend& this_backend() {
  static const backend b{
      "MongoDB",
      [] { return mongodb_uri(); },
      [](const std::string&) { return mongodb_uri(); },
      [](const std::string& collection) {
        return std::vector<std::string>{"--store", mongodb_uri(), "--db", "dibs_test", "--collection", collection};
      },
      [](const std::string& collection) {
        static mongo::mongo_store admin(options_for_collection("backend_admin"));
        return mongo::run_command(admin, R"({"listCollections": 1, "nameOnly": true})").find('"' + collection + '"') !=
               std::string::npos;
      },
      [](const std::string& prefix) { return unique_collection(prefix); },
      [](const std::string& collection) {
        const auto o = options_for_collection(collection);
        auto s = std::make_shared<mongo::mongo_store>(o);
        return backend_table{collection, {"--store", o.uri, "--db", o.db, "--collection", o.collection}, s,
                             [s] { mongo::drop(*s); }, nullptr, nullptr,
                             [s](const std::string& json) { return mongo::run_command(*s, json); }};
      },
      [](const std::string& collection, bool deleting) -> std::shared_ptr<admin_store> {
        if (deleting) return nullptr;  // MongoDB's store marks what it completes
        return std::make_shared<mongo::mongo_store>(options_for_collection(collection));
      },
      std::nullopt,
      backend_facts{"collection", "in database dibs_test"},
  };
  return b;
}

std::string everything_in_database() {
  static mongo::mongo_store admin(options_for_collection("backend_admin"));
  const auto names = mongo::run_command(admin, R"({"listCollections": 1, "nameOnly": true})");
  std::string out = names;
  static const std::regex name_field(R"re("name"\s*:\s*"([^"]+)")re");
  for (std::sregex_iterator it(names.begin(), names.end(), name_field), end; it != end; ++it)
    out += "\n" + mongo::run_command(admin, R"({"find": ")" + (*it)[1].str() + R"(", "batchSize": 100000})");
  return out;
}

}  // namespace dibs::test
