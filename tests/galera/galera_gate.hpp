// A way to stop a dibs transaction on Galera node 1 at a chosen point, without a sleep: a
// BEFORE UPDATE trigger on the job table reads a row of a gate table FOR UPDATE, and the test
// holds that row locked in its own session. dibs's transaction then waits inside its UPDATE,
// holding its rows, until the test writes the same rows on node 2: node 1 applies that
// write-set, and Galera aborts the local transaction in its way (a brute-force abort, error
// 1213): the same outcome as a certification failure at commit, at a moment the test chose.
// (Replicated rows are applied without triggers: node 2's own write passes the gate, which is
// not locked there.)
#pragma once

#include "chaos/sql_session.hpp"
#include "galera/galera_env.hpp"
#include "support/eventually.hpp"

#include <string>

namespace dibs::test {

class galera_gate {
 public:
  explicit galera_gate(const std::string& table)
      : table_(table), keeper_(galera_node_uri(1), 0), watcher_(galera_node_uri(1), 0) {
    watcher_.execute("CREATE TABLE " + table + "_gate (id INT PRIMARY KEY) ENGINE=InnoDB");
    watcher_.execute("INSERT INTO " + table + "_gate VALUES (1)");
    watcher_.execute("CREATE TRIGGER " + table + "_gated BEFORE UPDATE ON " + table +
                     " FOR EACH ROW BEGIN DECLARE g INT; SELECT id INTO g FROM " + table + "_gate WHERE id = 1 FOR UPDATE; END");
  }
  ~galera_gate() {
    if (closed_) open();
  }
  void close() {
    keeper_.execute("START TRANSACTION");
    keeper_.execute("SELECT id FROM " + table_ + "_gate WHERE id = 1 FOR UPDATE");
    closed_ = true;
  }
  void open() {
    keeper_.execute("ROLLBACK");
    closed_ = false;
  }
  // A session of node 1 runs the trigger's statement: dibs's UPDATE, waiting at the gate. (Its
  // lock wait, in the optimizer's read of the gate's row by key, is not always shown as LOCK
  // WAIT in INNODB_TRX: the processlist is what tells.)
  bool someone_waits() {
    return eventually(
        [&] {
          return watcher_.number("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT id INTO g FROM " +
                                 table_ + "\\_gate %'") >= 1;
        },
        std::chrono::seconds(30));
  }

 private:
  std::string table_;
  chaos::sql_session keeper_, watcher_;
  bool closed_ = false;
};

}  // namespace dibs::test
