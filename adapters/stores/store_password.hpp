// The store's password from somewhere `ps` can't show: a file (password_file) or the
// environment (DIBS_STORE_PASSWORD, for every store; MYSQL_PWD for mysql://, as the mysql client
// takes it), put into the URI the driver gets. Pure: the caller reads the file and the variables.
//
// Which one is used, first found wins:
//   1. the URI's own password (mysql://app:S3cret@...);
//   2. password_file FILE (its first line);
//   3. DIBS_STORE_PASSWORD;
//   4. mysql:// only: MYSQL_PWD.
// With none, the URI goes as it is: for postgresql:// libpq's own PGPASSWORD, PGPASSFILE and
// ~/.pgpass then apply, as for psql. A password in the URI AND a password_file is refused
// (two places typed on purpose, one would be ignored silently); the environment is ambient and
// yields to either without a word. A password needs a user in the URI (USER@HOST): a
// password_file without one is refused, the environment's password left unused.
#pragma once

#include <optional>
#include <string>

namespace dibs {

struct password_sources {
  std::optional<std::string> file;        // password_file's first line
  std::optional<std::string> dibs_env;    // DIBS_STORE_PASSWORD
  std::optional<std::string> mysql_env;   // MYSQL_PWD
};

// The URI to connect with. Throws setting_error ("password_file", "store") naming what is wrong;
// the message never holds the password, nor the URI unredacted.
std::string with_store_password(const std::string& uri, const password_sources& sources);

// The password in FILE: its first line, without the line end (a file written by `echo` ends in
// one). Throws setting_error("password_file", ...) when it can't be read or is empty.
std::string read_password_file(const std::string& path);

}  // namespace dibs
