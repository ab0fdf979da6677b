#include "store_password.hpp"

#include <dibs/stores/store_uri.hpp>

#include "engine/src/percent_encoding.hpp"
#include <dibs/setting_error.hpp>
#include "engine/src/uri_redact.hpp"

#include <fstream>

namespace dibs {

std::string with_store_password(const std::string& uri, const password_sources& s) {
  const auto kind = parse_store_uri(uri).kind;
  if (kind == store_kind::jsonl) {
    if (s.file) throw setting_error("password_file", "is for a database: a jsonl: store has no password");
    return uri;
  }
  const auto scheme_end = uri.find("://");
  if (scheme_end == std::string::npos) return uri;
  const auto start = scheme_end + 3;
  const auto end = uri.find_first_of("/?#", start);
  const std::string authority = uri.substr(start, end == std::string::npos ? std::string::npos : end - start);
  const auto at = authority.rfind('@');
  const std::string userinfo = at == std::string::npos ? std::string() : authority.substr(0, at);
  const auto colon = userinfo.find(':');
  const bool uri_has_password = colon != std::string::npos && colon + 1 < userinfo.size();
  if (uri_has_password) {
    if (s.file)
      throw setting_error("password_file",
                          "and a password in " + setting_name("store") + " '" + redact_uri(uri) + "': give the password in one place");
    return uri;
  }
  std::optional<std::string> chosen = s.file ? s.file : s.dibs_env;
  if (!chosen && kind == store_kind::mysql) chosen = s.mysql_env;
  if (!chosen) return uri;
  const std::string user = userinfo.substr(0, colon);
  if (user.empty()) {
    if (!s.file) return uri;  // the environment's password is for URIs that name a user
    throw setting_error("password_file", "needs a user in " + setting_name("store") + " '" + redact_uri(uri) + "': USER@HOST");
  }
  return uri.substr(0, start) + user + ":" + percent_encoded(*chosen) + authority.substr(at) +
         (end == std::string::npos ? std::string() : uri.substr(end));
}

std::string read_password_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw setting_error("password_file", "'" + path + "': cannot be read");
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw setting_error("password_file", "'" + path + "': its first line is empty");
  return line;
}

}  // namespace dibs
