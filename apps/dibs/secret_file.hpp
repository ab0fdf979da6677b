// Secrets the CLI takes from somewhere `ps` can't show: a file only its owner can read, or the
// environment. For the controls' key (--control-key-file, DIBS_CONTROL_KEY) and the API's URL
// with its key in it (--url-file, --batch-url-file, DIBS_URL, DIBS_BATCH_URL).
#pragma once

#include <optional>
#include <string>

namespace dibs::cli {

// The first line of FILE (without its line end and trailing blanks: a file written by `echo`
// ends in one). Refused (std::invalid_argument naming `flag` and the file) when the file can't
// be read, is no regular file, is empty, or can be read or written by anyone but its owner
// (mode & 077: "chmod 600 FILE"; ssh refuses such a key the same way). A symbolic link is
// followed (a Kubernetes secret volume is made of them); the file it reaches is judged.
std::string read_secret_file(const std::string& path, const std::string& flag);

// The variable's value, or nullopt when it is unset or empty.
std::optional<std::string> secret_from_env(const char* name);

}  // namespace dibs::cli
