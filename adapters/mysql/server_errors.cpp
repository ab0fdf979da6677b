#include "server_errors.hpp"

#include <cctype>

namespace dibs::mysql {

error_class classify(unsigned code) {
  switch (code) {
    case 1048:  // ER_BAD_NULL_ERROR: a column that can't be null
    case 1062:  // ER_DUP_ENTRY: the user's own unique key
    case 1216:  // ER_NO_REFERENCED_ROW: a foreign key (no parent)
    case 1217:  // ER_ROW_IS_REFERENCED: a foreign key points at the row (delete refused)
    case 1264:  // ER_WARN_DATA_OUT_OF_RANGE
    case 1265:  // WARN_DATA_TRUNCATED (an error in strict mode)
    case 1292:  // ER_TRUNCATED_WRONG_VALUE
    case 1366:  // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: e.g. a string the column's charset can't hold
    case 1367:  // ER_ILLEGAL_VALUE_FOR_TYPE
    case 1406:  // ER_DATA_TOO_LONG: e.g. a reason longer than a TEXT column
    case 1451:  // ER_ROW_IS_REFERENCED_2: a foreign key points at the row (delete refused)
    case 1452:  // ER_NO_REFERENCED_ROW_2: the user's foreign key
    case 1557:  // ER_FOREIGN_DUPLICATE_KEY
    case 1586:  // ER_DUP_ENTRY_WITH_KEY_NAME
    case 1644:  // ER_SIGNAL_EXCEPTION: the user's trigger refused the row (SIGNAL SQLSTATE '45000')
    case 1690:  // ER_DATA_OUT_OF_RANGE
    case 3140:  // ER_INVALID_JSON_TEXT (MySQL)
    case 3146:  // ER_INVALID_TYPE_FOR_JSON (MySQL)
    case 3157:  // ER_JSON_DOCUMENT_TOO_DEEP (MySQL)
    case 3819:  // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
    case 4025:  // ER_CONSTRAINT_FAILED (MariaDB: a CHECK, or a JSON column's json_valid())
      return error_class::row_refused;
    case 1205:  // ER_LOCK_WAIT_TIMEOUT
    case 1213:  // ER_LOCK_DEADLOCK
      return error_class::rerun;
    case 1044:  // ER_DBACCESS_DENIED_ERROR
    case 1045:  // ER_ACCESS_DENIED_ERROR
    case 1142:  // ER_TABLEACCESS_DENIED_ERROR: "UPDATE command denied to user ..."
    case 1143:  // ER_COLUMNACCESS_DENIED_ERROR
    case 1227:  // ER_SPECIFIC_ACCESS_DENIED_ERROR
    case 1370:  // ER_PROCACCESS_DENIED_ERROR: a trigger calls a routine the user may not run
      return error_class::denied;
    case 1053:  // ER_SERVER_SHUTDOWN
    case 1927:  // ER_CONNECTION_KILLED
    case 2002:  // CR_CONNECTION_ERROR
    case 2003:  // CR_CONN_HOST_ERROR
    case 2006:  // CR_SERVER_GONE_ERROR
    case 2013:  // CR_SERVER_LOST
    case 2055:  // CR_SERVER_LOST_EXTENDED
    case 4031:  // ER_CLIENT_INTERACTION_TIMEOUT: the server closed an idle session
      return error_class::link_lost;
    case 1047:  // ER_UNKNOWN_COM_ERROR, as Galera uses it: "WSREP has not yet prepared node for
                // application use" (a node cut off from the primary component, or joining)
      return error_class::node_unready;
    default:
      return error_class::other;
  }
}

std::string denied_right(std::string_view message) {
  const auto at = message.find(" command denied");
  if (at == std::string_view::npos) return "";
  std::string right(message.substr(0, at));
  for (auto& c : right) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return right;
}

}  // namespace dibs::mysql
