#include "plm/srun_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <sodium.h>

#include "plm/piped_child.h"
#include "plm/ssh_launcher.h"

namespace grove {
namespace {

constexpr std::size_t kTailLines = 12;

std::string join_hosts(const SrunLaunchConfig& config) {
  const SpawnPlan& plan = *config.bootstrap.plan;
  std::string list;
  for (Vpid vpid = config.first_vpid; vpid < config.first_vpid + config.daemons(); ++vpid)
    list += (vpid == config.first_vpid ? "" : ",") + plan.daemons[vpid].host.name;
  return list;
}

}  // namespace

std::vector<std::string> srun_argv(const SrunLaunchConfig& config) {
  const SpawnPlan& plan = *config.bootstrap.plan;
  const RemoteSettings& remote = config.bootstrap.remote;
  const std::string daemons = std::to_string(config.daemons());
  std::vector<std::string> argv = config.srun;
  // --ntasks explicitly: an inherited SLURM_NTASKS would otherwise override
  // one task per node. A daemon that fails takes the step down
  // (--kill-on-bad-exit), and srun then reports it.
  argv.insert(argv.end(), {"--nodes=" + daemons, "--ntasks=" + daemons, "--ntasks-per-node=1",
                           "--nodelist=" + join_hosts(config), "--kill-on-bad-exit=1", "--mpi=none",
                           "--cpu-bind=none", "--job-name=grove-dvm"});
  // A node a daemon left may still be held by the step that started it (its
  // other tasks run on): a joiner's step shares the node with it.
  if (config.joining) argv.push_back("--overlap");
  argv.insert(argv.end(), config.extra_args.begin(), config.extra_args.end());
  argv.insert(argv.end(),
              {remote.groved_path, "--vpid-from-slurm", std::to_string(config.first_vpid),
               "--dvm-size", std::to_string(plan.size()), "--controller",
               remote.controller_endpoint, "--bootstrap-fd", "0"});
  if (config.joining) argv.push_back("--join");
  argv.insert(argv.end(), config.param_arguments.begin(), config.param_arguments.end());
  return argv;
}

std::vector<std::string> srun_environment(const SrunLaunchConfig& config, const char* path,
                                          const char* library_path) {
  const std::string& prefix = config.bootstrap.remote.prefix;
  if (prefix.empty()) return {};
  auto in_front = [](const std::string& directory, const char* rest) {
    // No empty entry when the variable is unset (ld.so reads one as ".").
    return rest != nullptr && *rest != '\0' ? directory + ":" + rest : directory;
  };
  return {"PATH=" + in_front(prefix + "/bin", path),
          "LD_LIBRARY_PATH=" + in_front(prefix + "/lib", library_path)};
}

SrunLauncher::SrunLauncher(event_base* base, Log& log, SrunLaunchConfig config, Hooks hooks)
    : base_(base),
      log_(log),
      config_(std::move(config)),
      hooks_(std::move(hooks)),
      bootstrap_bytes_(encode_bootstrap(config_.bootstrap)) {
  // srun dying before it has read the bootstrap must not kill us.
  signal(SIGPIPE, SIG_IGN);
}

SrunLauncher::~SrunLauncher() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, WNOHANG);
  }
  close_pipes();
  sodium_memzero(bootstrap_bytes_.data(), bootstrap_bytes_.size());
}

Status SrunLauncher::start() {
  std::vector<std::string> argv = srun_argv(config_);
  std::string shown;
  for (const auto& arg : argv)
    shown += (shown.empty() ? "" : " ") + shell_quote(arg);
  log_.verbose("plm", 1, "starting %u daemons: %s", config_.daemons(), shown.c_str());
  auto child = start_piped_child(
      argv, srun_environment(config_, std::getenv("PATH"), std::getenv("LD_LIBRARY_PATH")),
      "grove: cannot execute '" + argv[0] + "' (plm_slurm_srun)");
  if (!child) return Error{"cannot start srun: " + child.error().message};
  pid_ = child->pid;
  in_fd_ = child->in_fd;
  out_fd_ = child->out_fd;
  err_fd_ = child->err_fd;
  in_event_ =
      IoWatch(base_, in_fd_, IoReady::write, IoRepeat::persist, [this] { write_bootstrap_part(); });
  out_event_ =
      IoWatch(base_, out_fd_, IoReady::read, IoRepeat::persist, [this] { on_output(false); });
  err_event_ =
      IoWatch(base_, err_fd_, IoReady::read, IoRepeat::persist, [this] { on_output(true); });
  for (IoWatch* each : {&in_event_, &out_event_, &err_event_})
    each->enable();
  return ok_status();
}

void SrunLauncher::write_bootstrap_part() {
  while (written_ < bootstrap_bytes_.size()) {
    ssize_t wrote =
        write(in_fd_, bootstrap_bytes_.data() + written_, bootstrap_bytes_.size() - written_);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (wrote <= 0) {
      tail_.push_back("(srun ended before reading the bootstrap)");
      break;
    }
    written_ += static_cast<std::size_t>(wrote);
  }
  // srun copies what it read to every task; our close is their end of input.
  in_event_ = IoWatch();
  close(in_fd_);
  in_fd_ = -1;
}

void SrunLauncher::on_output(bool is_stderr) {
  const int fd = is_stderr ? err_fd_ : out_fd_;
  std::string& buffer = is_stderr ? err_buffer_ : out_buffer_;
  char chunk[4096];
  for (;;) {
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) (is_stderr ? err_event_ : out_event_) = IoWatch();
      break;
    }
    buffer.append(chunk, static_cast<std::size_t>(got));
  }
  for (auto newline = buffer.find('\n'); newline != std::string::npos;
       newline = buffer.find('\n')) {
    std::string line = buffer.substr(0, newline);
    buffer.erase(0, newline + 1);
    if (!is_stderr && line == kDaemonUpLine) {
      ++up_;
      log_.verbose("plm", 1, "%u of %u daemons up", up_, config_.daemons());
      continue;
    }
    // The daemons' own log lines pass through (they name their host);
    // srun's notes are kept for a failure's message only.
    if (line.rfind("srun: ", 0) != 0) std::fprintf(stderr, "%s\n", line.c_str());
    tail_.push_back(std::move(line));
    if (tail_.size() > kTailLines) tail_.pop_front();
  }
}

std::string SrunLauncher::last_lines() const {
  std::string text;
  for (const auto& line : tail_)
    text += "\n    " + line;
  return text;
}

void SrunLauncher::signal_all(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

void SrunLauncher::close_pipes() {
  in_event_ = IoWatch();
  out_event_ = IoWatch();
  err_event_ = IoWatch();
  for (int* fd : {&in_fd_, &out_fd_, &err_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void SrunLauncher::reap() {
  if (pid_ <= 0) return;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return;
  pid_ = -1;
  // What srun printed before it ended is still in the pipes.
  if (out_event_) on_output(false);
  if (err_event_) on_output(true);
  close_pipes();
  if (hooks_.on_exit) hooks_.on_exit("srun " + describe_exit(status), last_lines());
}

}  // namespace grove
