// The library names its settings ("lease", "claim_batch", "store"); a user of the command line
// knows them as flags. This maps one to the other, for the errors the CLI prints.
#pragma once

#include <dibs/setting_error.hpp>

#include <string>

namespace dibs::cli {

// "--claim-batch" for "claim_batch"; the few whose flag has another name ("database": "--db")
// are listed in flag_names.cpp.
std::string flag_for(const std::string& setting);

// The error's words with the setting as its flag: "--lease must be at least 10 ms".
std::string in_flag_words(const setting_error& e);

}  // namespace dibs::cli
