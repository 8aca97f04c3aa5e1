#include "client_launch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

extern char** environ;

namespace grove::pmix_test {
namespace {

std::string variable_name(const std::string& entry) {
  return entry.substr(0, entry.find('='));
}

std::vector<std::string> merged_environment(const std::vector<std::string>& extra_env) {
  std::vector<std::string> merged;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string current = *entry;
    bool replaced = false;
    for (const std::string& extra : extra_env)
      replaced = replaced || variable_name(extra) == variable_name(current);
    if (!replaced) merged.push_back(current);
  }
  merged.insert(merged.end(), extra_env.begin(), extra_env.end());
  return merged;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& text : strings)
    result.push_back(text.data());
  result.push_back(nullptr);
  return result;
}

void record_status(ChildProcess& child, int status) {
  child.exited = true;
  if (WIFSIGNALED(status)) child.signal = WTERMSIG(status);
  if (WIFEXITED(status)) child.exit_code = WEXITSTATUS(status);
}

}  // namespace

Result<ChildProcess> spawn_child(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env, int out_fd,
                                 int err_fd) {
  if (argv.empty()) return Error{"spawn_child: empty argv"};
  std::vector<std::string> args = argv;
  std::vector<std::string> env = merged_environment(extra_env);
  std::vector<char*> arg_pointers = pointers(args);
  std::vector<char*> env_pointers = pointers(env);
  pid_t pid = ::fork();
  if (pid < 0) return Error{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {  // only async-signal-safe calls from here on
    if (::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0) ::_exit(126);
    ::execve(arg_pointers[0], arg_pointers.data(), env_pointers.data());
    ::_exit(127);
  }
  ChildProcess child;
  child.pid = pid;
  return child;
}

bool poll_child(ChildProcess& child) {
  if (child.exited || child.pid <= 0) return true;
  int status = 0;
  pid_t reaped = ::waitpid(child.pid, &status, WNOHANG);
  if (reaped == child.pid) record_status(child, status);
  return child.exited;
}

void kill_child(ChildProcess& child) {
  if (child.exited || child.pid <= 0) return;
  ::kill(child.pid, SIGKILL);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  record_status(child, status);
}

namespace {
void on_tick(evutil_socket_t, short, void* arg) {
  event_base_loopbreak(static_cast<event_base*>(arg));
}
}  // namespace

bool run_loop_until(event_base* base, const std::function<bool()>& done,
                    std::chrono::milliseconds deadline) {
  auto give_up_at = std::chrono::steady_clock::now() + deadline;
  std::unique_ptr<event, decltype(&event_free)> tick(event_new(base, -1, EV_PERSIST, on_tick, base),
                                                     &event_free);
  timeval period{0, 5000};
  event_add(tick.get(), &period);
  while (!done() && std::chrono::steady_clock::now() < give_up_at)
    event_base_loop(base, EVLOOP_ONCE);
  return done();
}

Status wait_for_answer(event_base* base, const std::function<void(PmixServer::StatusDone)>& call) {
  auto answer = std::make_shared<std::optional<Status>>();
  call([answer](Status status) { *answer = std::move(status); });
  if (!run_loop_until(
          base, [&] { return answer->has_value(); }, std::chrono::seconds(60)))
    return Error{"no answer from the PMIx server within 60 s"};
  return **answer;
}

Result<std::vector<std::string>> register_client_env(event_base* base, PmixServer& server,
                                                     const std::string& nspace,
                                                     std::uint32_t rank) {
  Status registered = wait_for_answer(base, [&](PmixServer::StatusDone done) {
    server.register_client(nspace, rank, ::getuid(), ::getgid(), std::move(done));
  });
  if (!registered) return registered.error();
  return server.client_environment(nspace, rank);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) lines.push_back(line);
  }
  return lines;
}

}  // namespace grove::pmix_test
