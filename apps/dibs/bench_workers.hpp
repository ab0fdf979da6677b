// The worker processes of `dibs bench --processes K`: K-1 copies of this program run as
// `dibs bench --worker NAME ...` on the scratch the parent made. A worker opens the store, says
// "ready", waits for "go" on its stdin (so the clock starts when every process can claim), drains
// its share, and prints its figures (bench_figures.hpp: worker_line) on its stdout.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace dibs::cli {

class worker_process {
 public:
  // Starts this program (/proc/self/exe) with `args` (argv[1...]); stderr is shared.
  explicit worker_process(const std::vector<std::string>& args);
  // A worker still running is sent SIGTERM and reaped.
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // The worker's next line on stdout without its newline; "" once it has closed stdout.
  std::string read_line();
  void go();
  void signal(int sig);
  // Closes its stdin, waits for it to end; its exit status (128 + signal when killed).
  int wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::FILE* from_ = nullptr;  // its stdout
  int to_ = -1;                // its stdin
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace dibs::cli
