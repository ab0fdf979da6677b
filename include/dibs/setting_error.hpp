// A bad setting, named as the library names it (engine_config's field, an option's name:
// "lease", "claim_batch", "store"), never as a program spells it: the CLI maps the name to its
// flag, an embedding program to whatever its users type.
//
// Messages that name a setting in passing (an error's advice, a log line) say setting_name(s):
// the library's name unless the program has said how its users know its settings.
#pragma once

#include <stdexcept>
#include <string>

namespace dibs {

// How a program's users know a setting; called from any thread, so it must not keep state.
using setting_namer = std::string (*)(const std::string& setting);
// Once, at the program's start, before any run: the CLI names its flags. nullptr: the library's names.
void name_settings_with(setting_namer namer);
// `setting` as this program's users know it: the library's name ("rate_scope") by default.
std::string setting_name(const std::string& setting);

class setting_error : public std::invalid_argument {
 public:
  // what(): "<setting> <problem>", e.g. "lease must be at least 10 ms", the setting as
  // setting_name() says it (so a message passed on whole still names it the program's way).
  setting_error(std::string setting, std::string problem)
      : std::invalid_argument(setting_name(setting) + " " + problem),
        setting_(std::move(setting)),
        problem_(std::move(problem)) {}
  const std::string& setting() const { return setting_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string setting_, problem_;
};

}  // namespace dibs
