#include "end_line.hpp"

namespace dibs::cli {

std::string enrich_end_line(const end_line_facts& f) {
  const auto& s = f.now;
  std::string line = "enrich: " + f.store + ": store now: " + std::to_string(s.done) + " done";
  if (f.deletes_done) line += " (--on-done delete removes finished rows)";
  line += ", " + std::to_string(s.failed) + " failed, " + std::to_string(s.pending) + " pending, " +
          std::to_string(s.leased_live + s.leased_expired) + " leased; this run: " + std::to_string(f.run.completed) +
          (f.deletes_done ? " done and deleted, " : " done, ") + std::to_string(f.run.failed) + " failed";
  if (f.run.no_data > 0)  // done too, with the API's "no data" answer written (not failed)
    line += ", " + std::to_string(f.run.no_data) + " with no data from the API";
  if (f.run.reuses_answers())
    line += "; answers reused: " + std::to_string(f.run.answers_reused) + " cached" +
            (f.run.answers_from_store ? " (" + std::to_string(f.run.answers_from_store) + " from the store)" : "") + ", " +
            std::to_string(f.run.answers_joined) + " joined, " + std::to_string(f.run.answer_calls) + " API calls (" +
            std::to_string(static_cast<int>(f.run.answer_hit_ratio() * 100 + 1e-9)) + "% hits)";  // floored
  line += "; claim conflicts " + std::to_string(f.claim_conflicts);
  // Stores that claim from candidates read the candidates first, then lock them: each shard of
  // this process is a claimer too, so on a small table they keep meeting each other's rows. On a
  // multi-primary cluster (Galera) a claim can also lose its rows at commit to another node's.
  if (f.claim_conflicts > 0)
    line += " (candidates another shard, worker or cluster node claimed first: read again, never claimed twice)";
  return line;
}

}  // namespace dibs::cli
