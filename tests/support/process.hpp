// Runs a program as a child process, captures its standard output, and can signal it (tests only).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace dibs::test {

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class child_process {
 public:
  // stderr is captured with stdout when `merge_stderr`, appended to the file `stderr_path` when
  // that is given, and otherwise shared with this process.
  explicit child_process(const std::vector<std::string>& argv, bool merge_stderr = false,
                         const std::string& stderr_path = {}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    if (merge_stderr) posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    else if (!stderr_path.empty())
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    // The child gets standard input, output and error, nothing else: a descriptor it inherited
    // (a socket of this process, another child's pipe) would stay open for its whole life.
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw std::runtime_error("cannot start " + argv[0]);
    }
    out_fd_ = fds[0];
  }
  ~child_process() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }

  void signal(int sig) {
    if (pid_ > 0 && !exited_) ::kill(pid_, sig);
  }

  // False once the child has ended (it is reaped here; finish() still collects its output).
  bool running() {
    if (pid_ <= 0 || exited_) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return !exited_;
  }

  // Reads everything the child prints, waits for it, and returns its exit status.
  int finish(std::string& out) {
    char buf[4096];
    for (;;) {
      const auto n = ::read(out_fd_, buf, sizeof buf);
      if (n > 0) out.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) break;
    }
    ::close(out_fd_);
    out_fd_ = -1;
    int status = status_;
    if (!exited_) ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

// One process's end: its exit code and what it printed (stdout and stderr).
struct process_end {
  int rc = -1;
  std::string out;
};
// Runs `argv` as `n` processes at once (processes sharing a store), each to its end.
inline std::vector<process_end> run_at_once(const std::vector<std::string>& argv, int n) {
  std::vector<std::unique_ptr<child_process>> runs;
  for (int i = 0; i < n; ++i) runs.push_back(std::make_unique<child_process>(argv, true));
  std::vector<process_end> ends(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < runs.size(); ++i) ends[i].rc = runs[i]->finish(ends[i].out);
  return ends;
}

inline std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  auto start = text.rfind('\n', end);
  const auto from = start == std::string::npos ? 0 : start + 1;
  return text.substr(from, end - from + 1);
}

}  // namespace dibs::test
