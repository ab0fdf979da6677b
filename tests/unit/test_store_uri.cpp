// The one store URI grammar (include/dibs/stores/store_uri.hpp), parsed without a server; and
// open_store on the one store that needs none (a JSON Lines file).
#include <dibs/stores/open_store.hpp>

#include <dibs/stores/jsonl_store.hpp>

#include <dibs/setting_error.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace dibs;

TEST_CASE("store URI: a MongoDB URI's path is the database, collection= the collection, the driver gets the rest",
          "[uri][stores]") {
  auto u = parse_store_uri("mongodb://u:p%40ss@db1:27017,db2:27018/shop?replicaSet=rs0&collection=orders&w=majority");
  CHECK(u.kind == store_kind::mongodb);
  CHECK(u.database == "shop");
  CHECK(u.collection == "orders");
  CHECK(u.driver_uri == "mongodb://u:p%40ss@db1:27017,db2:27018/shop?replicaSet=rs0&w=majority");
  CHECK(u.hosts == "db1:27017,db2:27018");
  CHECK(u.host == "db1");
  CHECK(u.port == 27017);

  // collection= alone: no '?' left for the driver; the name is percent-decoded, its key case-free.
  u = parse_store_uri("mongodb://h/db?Collection=a%2Fb");
  CHECK(u.collection == "a/b");
  CHECK(u.driver_uri == "mongodb://h/db");
  // No path, no collection: both left to the options (then test.message).
  u = parse_store_uri("mongodb://127.0.0.1:4000/?serverSelectionTimeoutMS=5000");
  CHECK(u.database.empty());
  CHECK(u.collection.empty());
  CHECK(u.driver_uri == "mongodb://127.0.0.1:4000/?serverSelectionTimeoutMS=5000");
  u = parse_store_uri("mongodb+srv://cluster0.example.net/app?collection=jobs;appName=x");
  CHECK(u.kind == store_kind::mongodb);
  CHECK(u.database == "app");
  CHECK(u.collection == "jobs");
  CHECK(u.driver_uri == "mongodb+srv://cluster0.example.net/app?appName=x");
  CHECK(parse_store_uri("mongodb://[::1]:27019/x").port == 27019);
  CHECK(parse_store_uri("mongodb://[::1]:27019/x").host == "[::1]");
}

TEST_CASE("store URI: MySQL names its database and table, a file its path", "[uri][stores]") {
  auto u = parse_store_uri("mysql://app:s3cret@db.example:3307/crm?table=leads&ssl-mode=REQUIRED");
  CHECK(u.kind == store_kind::mysql);
  CHECK(u.database == "crm");
  CHECK(u.collection == "leads");
  CHECK(u.host == "db.example");
  CHECK(u.port == 3307);
  CHECK(u.driver_uri == u.text);
  CHECK(parse_store_uri("mysql://app@h/crm").collection == "jobs");  // the default table
  CHECK(parse_store_uri("mysql://app@h/crm").port == 3306);

  u = parse_store_uri("jsonl:/data/in.jsonl");
  CHECK(u.kind == store_kind::jsonl);
  CHECK(u.path == "/data/in.jsonl");
}

TEST_CASE("store URI: a copy points at another host with everything else kept", "[uri][stores]") {
  CHECK(parse_store_uri("mysql://app:pa%2Fss@10.0.0.5:3306/crm?table=t_1&ssl-mode=DISABLED").with_hosts("127.0.0.1:4100") ==
        "mysql://app:pa%2Fss@127.0.0.1:4100/crm?table=t_1&ssl-mode=DISABLED");
  CHECK(parse_store_uri("mongodb://h1:1,h2:2/?w=1").with_hosts("127.0.0.1:9") == "mongodb://127.0.0.1:9/?w=1");
  CHECK(parse_store_uri("mongodb://u:p@h").with_hosts("x:1") == "mongodb://u:p@x:1");
}

TEST_CASE("store URI: a bad one is refused naming the setting, with its password hidden", "[uri][stores][secrets]") {
  auto refusal = [](const std::string& uri) {
    try {
      parse_store_uri(uri);
    } catch (const setting_error& e) {
      CHECK(e.setting() == "store");
      return std::string(e.what());
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const auto unknown = refusal("redis://u:Hunter2@h/db");
  CHECK_THAT(unknown, Catch::Contains("expected mongodb://") && Catch::Contains("mysql://") &&
                          Catch::Contains("postgresql://") && Catch::Contains("jsonl:") &&
                          !Catch::Contains("Hunter2"));
  CHECK_THAT(refusal("jsonl:"), Catch::Contains("no path"));
  CHECK_THAT(refusal("mongodb:///db"), Catch::Contains("no host"));
  CHECK_THAT(refusal("mongodb://u:Hunter2@h/db?collection="), Catch::Contains("no collection") && !Catch::Contains("Hunter2"));
  CHECK_THAT(refusal("mongodb://h/d%zzb"), Catch::Contains("%-escape"));
  CHECK_THAT(refusal("mysql://app:Hunter2@h:3306"), Catch::Contains("no database") && !Catch::Contains("Hunter2"));
}

TEST_CASE("store URI: a scheme a letter or two off, or a bare file name, is refused with the one meant", "[uri][stores][secrets]") {
  auto refusal = [](const std::string& uri) {
    try {
      parse_store_uri(uri);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(refusal("mysq://app:Hunter2@127.0.0.1/crm?table=people"),
             Catch::Contains("did you mean 'mysql://app:***@127.0.0.1/crm?table=people'?") && !Catch::Contains("Hunter2"));
  CHECK_THAT(refusal("postgressql://h/db"), Catch::Contains("did you mean 'postgresql://h/db'?"));
  CHECK_THAT(refusal("mongo://h/db"), Catch::Contains("did you mean 'mongodb://h/db'?"));
  CHECK_THAT(refusal("customers.jsonl"), Catch::Contains("did you mean 'jsonl:customers.jsonl'?"));
  CHECK_THAT(refusal("data/in.ndjson"), Catch::Contains("did you mean 'jsonl:data/in.ndjson'?"));
  CHECK_THAT(refusal("jsnl:in.jsonl"), Catch::Contains("did you mean 'jsonl:in.jsonl'?"));
  CHECK_THAT(refusal("redis://h/db"), !Catch::Contains("did you mean"));
  CHECK_THAT(refusal("people"), !Catch::Contains("did you mean"));
}

TEST_CASE("store URI: PostgreSQL's hosts are cut out, the rest is libpq's", "[stores]") {
  for (const std::string scheme : {"postgresql://", "postgres://"}) {
    const auto u = parse_store_uri(scheme + "app:p%40ss@db.example:5433/enrich?table=jobs&sslmode=require");
    CHECK(u.kind == store_kind::postgresql);
    CHECK(u.host == "db.example");
    CHECK(u.port == 5433);
    CHECK(u.driver_uri == u.text);
    CHECK(u.with_hosts("127.0.0.1:4000") == scheme + "app:p%40ss@127.0.0.1:4000/enrich?table=jobs&sslmode=require");
  }
}

TEST_CASE("open_store opens a JSON Lines file from its URI, and refuses options the store has not", "[stores][jsonl]") {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("dibs-open-store-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "in.jsonl") << "{\"originatingIp\":\"1.2.3.4\"}\n{\"originatingIp\":\"5.6.7.8\"}\n";
  store_options o;
  o.out = (dir / "out.jsonl").string();
  auto st = open_store("jsonl:" + (dir / "in.jsonl").string(), o);
  REQUIRE(std::dynamic_pointer_cast<jsonl::jsonl_store>(st));
  CHECK(st->stats_blocking().pending == 2);
  st.reset();

  // A claim strategy MySQL has not is refused before any connection is tried.
  store_options bad;
  bad.claim = "find-and-modify";
  try {
    open_store("mysql://app:Hunter2@127.0.0.1:1/db", bad);
    FAIL("opened");
  } catch (const setting_error& e) {
    CHECK(e.setting() == "claim");
    CHECK_THAT(e.what(), Catch::Contains("skip-locked") && !Catch::Contains("Hunter2"));
  }
  bad = {};
  bad.on_done = "archive";
  CHECK_THROWS_WITH(open_store("mysql://app@127.0.0.1:1/db", bad), Catch::Contains("on_done 'archive'"));
  fs::remove_all(dir);
}
