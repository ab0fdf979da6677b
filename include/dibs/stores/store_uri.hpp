// The one grammar of store URIs, as pure parsing (no server, no file opened): what open_store
// reads to pick and configure a store, and what tests and tools read to point a copy of a URI
// elsewhere (a proxy) without taking it apart by hand.
//
//   mongodb://[USER:PASS@]HOST[:PORT][,HOST...]/[DB][?OPTIONS][&collection=C]
//   mongodb+srv://...                 the same, through DNS seed lists
//       DB is the database (and, as in every MongoDB URI, the default authSource);
//       collection= names the collection (dibs's own option: taken out before the driver sees
//       the URI). Without them: test.message. store_options can override both (db, collection).
//   mysql://USER[:PASS]@HOST[:PORT]/DB[?table=T&socket=...&ssl-mode=...]   (adapters/mysql/mysql_uri.hpp)
//   postgresql://USER[:PASS]@HOST[:PORT]/DB[?table=T&LIBPQ_PARAMS]   (or postgres://; every
//       parameter but table= goes to libpq: adapters/postgres/pg_protocol.hpp)
//   jsonl:IN.jsonl                    a JSON Lines file (the output file is an option: out)
//
// Adding a store (say postgresql://): a store_kind (and its name in to_string), its prefixes in
// the table at the top of store_uri.cpp, its case in open_store.cpp, its form in
// store_uri_grammar(); a network store also calls split_hosts like mysql does.
#pragma once

#include <cstdint>
#include <string>

namespace dibs {

enum class store_kind { mongodb, mysql, postgresql, jsonl };
const char* to_string(store_kind k);

struct store_uri {
  store_kind kind = store_kind::mongodb;
  std::string text;  // as given
  // Network stores: the URI cut around its host list, text == before_hosts + hosts + after_hosts,
  // so that a copy can point at other hosts (with_hosts) with everything else kept.
  std::string before_hosts, hosts, after_hosts;
  std::string host;        // the first host (mysql: 127.0.0.1 when none is written)
  std::uint16_t port = 0;  // its port, 0 when not written as a number (mysql: 3306 by default)
  std::string database;    // mongodb: the path, percent-decoded ("" = none); mysql: the database
  std::string collection;  // mongodb: ?collection= ("" = none); mysql: ?table= (jobs by default)
  std::string path;        // jsonl: the input file
  std::string driver_uri;  // what the store's driver gets: mongodb: text without collection=

  // The same URI with `host_port` (e.g. "127.0.0.1:4000") in place of its host list.
  std::string with_hosts(const std::string& host_port) const;
};

// Throws std::invalid_argument naming what is wrong; the message shows the URI only redacted
// (dibs/uri_redact.hpp), and never a piece cut out of it (it may be a piece of a password).
store_uri parse_store_uri(const std::string& text);

// The grammar in one line, for help texts and errors.
const char* store_uri_grammar();

}  // namespace dibs
