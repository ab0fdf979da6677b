// `dibs enrich --help` in groups, by what each flag shapes: where the items are, the request, what
// an answer means, how fast and how many calls, connections and timeouts, answer reuse, the run.
// One table for the whole command, so that a flag added anywhere lands in a group here.
#pragma once

namespace CLI {
class App;
}

namespace dibs::cli {

// Sets the help group of every option of `cmd` named in the table; the rest go to "The run".
void group_enrich_flags(CLI::App& cmd);

}  // namespace dibs::cli
