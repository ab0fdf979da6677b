// What a MySQL/MariaDB server's error means for the call that met it, decided without a server
// (tests/unit/test_server_limits.cpp).
//
// A batch write is one statement: when the server refuses one row of it for what that row
// carries (a foreign key, a CHECK, a trigger's SIGNAL, a value too long), the whole statement
// fails, and the engine must learn that the cause is a row (split the batch, fail that row) and
// not the connection (retry it all later). A user without a right must end the run: no retry
// helps. Anything dibs does not know is taken for an outage: retried after a backoff.
#pragma once

#include <string>
#include <string_view>

namespace dibs::mysql {

enum class error_class {
  row_refused,  // a value a row carries: the same row would be refused again (store_refused)
  rerun,        // a deadlock or lock-wait timeout: the server rolled back; run the transaction again
  link_lost,    // the connection is gone: reconnect, and try once more
  node_unready, // a Galera node outside the primary component, or still joining (1047): the
                // connection works but the node takes no statements; another node may
  denied,       // the user lacks a right (store_denied)
  other,        // unknown: an outage, as far as dibs can tell
};

error_class classify(unsigned error_code);
inline bool refuses_content(unsigned error_code) { return classify(error_code) == error_class::row_refused; }

// The right a denial names: "DELETE" of "DELETE command denied to user 'u'@'h' for table 't'";
// "" when the message names none.
std::string denied_right(std::string_view server_message);

}  // namespace dibs::mysql
