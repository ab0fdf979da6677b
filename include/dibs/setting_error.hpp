// A bad setting, named as the library names it (engine_config's field, an option's name:
// "lease", "claim_batch", "store"), never as a program spells it: the CLI maps the name to its
// flag ("--lease"), an embedding program to whatever its users type.
#pragma once

#include <stdexcept>
#include <string>

namespace dibs {

class setting_error : public std::invalid_argument {
 public:
  // what(): "<setting> <problem>", e.g. "lease must be at least 10 ms".
  setting_error(std::string setting, std::string problem)
      : std::invalid_argument(setting + " " + problem), setting_(std::move(setting)), problem_(std::move(problem)) {}
  const std::string& setting() const { return setting_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string setting_, problem_;
};

}  // namespace dibs
