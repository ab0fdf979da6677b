#include "bench_workers.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace dibs::cli {

worker_process::worker_process(const std::vector<std::string>& args) {
  int out[2], in[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(in, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the copies; every other end closes at exec.
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  std::vector<std::string> all{"dibs"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  // This program's own file, by its name (so ps shows dibs, not exe), else the kernel's link.
  char self[4096];
  const auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string program = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string("/proc/self/exe");
  // A worker starts with no signal blocked: the parent's signal_watch blocks SIGINT/SIGTERM in
  // this thread, and a mask outlives exec.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  const int rc = posix_spawn(&pid_, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(in[0]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(in[1]);
    throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(rc));
  }
  from_ = ::fdopen(out[0], "r");
  to_ = in[1];
}

worker_process::~worker_process() {
  if (!reaped_) {
    signal(SIGTERM);
    wait();
  }
  if (from_) std::fclose(from_);
}

std::string worker_process::read_line() {
  std::string line;
  int c;
  while (from_ && (c = std::fgetc(from_)) != EOF && c != '\n') line += static_cast<char>(c);
  return line;
}

void worker_process::go() {
  if (to_ >= 0 && ::write(to_, "go\n", 3) != 3) {
    // A worker that died already: wait() says how.
  }
}

void worker_process::signal(int sig) {
  if (!reaped_ && pid_ > 0) ::kill(pid_, sig);
}

int worker_process::wait() {
  if (to_ >= 0) {
    ::close(to_);
    to_ = -1;
  }
  if (!reaped_) {
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
  }
  return status_;
}

}  // namespace dibs::cli
