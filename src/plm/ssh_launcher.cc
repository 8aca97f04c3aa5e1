#include "plm/ssh_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sodium.h>

#include "plm/piped_child.h"

namespace grove {
namespace {

constexpr std::size_t kTailLines = 8;

}  // namespace

std::string remote_daemon_command(const SshLaunchConfig& config, Vpid vpid) {
  const RemoteSettings& remote = config.bootstrap.remote;
  const SpawnPlan& plan = *config.bootstrap.plan;
  std::string command = "exec ";
  if (!remote.prefix.empty()) {
    // No empty entry when LD_LIBRARY_PATH is unset (ld.so would read it as
    // the current directory).
    // PRRTE users met "command not found" without this: the remote shell's
    // PATH and library path need not know the install.
    command += "env PATH=" + shell_quote(remote.prefix + "/bin") +
               ":\"$PATH\" LD_LIBRARY_PATH=" + shell_quote(remote.prefix + "/lib") +
               "\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\" ";
  }
  std::vector<std::string> args = {remote.groved_path,
                                   "--vpid",
                                   std::to_string(vpid),
                                   "--dvm-size",
                                   std::to_string(plan.size()),
                                   "--controller",
                                   remote.controller_endpoint,
                                   "--bootstrap-fd",
                                   "0"};
  if (config.joining) args.push_back("--join");
  args.insert(args.end(), config.param_arguments.begin(), config.param_arguments.end());
  for (std::size_t i = 0; i < args.size(); ++i)
    command += (i == 0 ? "" : " ") + shell_quote(args[i]);
  return command;
}

std::vector<std::string> ssh_argv(const SshLaunchConfig& config, Vpid vpid) {
  std::vector<std::string> argv = config.agent;
  if (!argv.empty() && std::filesystem::path(argv[0]).filename() == "ssh") {
    // Never a password prompt: a launch either works unattended or fails.
    // A host that accepts the connection and then stalls fails after the
    // timeout, named, instead of holding its slot. Appended after the
    // user's options: ssh takes the first value given, so theirs win.
    argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-x"});
  }
  argv.push_back(config.bootstrap.plan->daemons[vpid].host.ssh_target());
  argv.push_back(remote_daemon_command(config, vpid));
  return argv;
}

SshLauncher::SshLauncher(event_base* base, Log& log, SshLaunchConfig config, Hooks hooks)
    : base_(base),
      log_(log),
      config_(std::move(config)),
      bootstrap_bytes_(encode_bootstrap(config_.bootstrap)),
      hooks_(std::move(hooks)) {
  // A client that dies before reading its bootstrap must not kill us.
  signal(SIGPIPE, SIG_IGN);
}

SshLauncher::~SshLauncher() {
  signal_all(SIGTERM);
  for (auto& [pid, client] : clients_) {
    client->in_event = IoWatch();
    client->out_event = IoWatch();
    client->err_event = IoWatch();
    if (client->in_fd >= 0) close(client->in_fd);
    close(client->out_fd);
    close(client->err_fd);
    waitpid(pid, nullptr, WNOHANG);
  }
  sodium_memzero(bootstrap_bytes_.data(), bootstrap_bytes_.size());
}

void SshLauncher::signal_all(int signal) {
  for (auto& [pid, client] : clients_)
    kill(pid, signal);
}

void SshLauncher::launch(const std::vector<Vpid>& vpids) {
  for (Vpid vpid : vpids)
    queue_.push_back(vpid);
  start_queued();
}

void SshLauncher::start_queued() {
  while (!queue_.empty() && launching_ < config_.max_concurrent) {
    Vpid vpid = queue_.front();
    queue_.pop_front();
    start(vpid);
  }
}

void SshLauncher::start(Vpid vpid) {
  const std::string host = config_.bootstrap.plan->daemons[vpid].host.name;
  log_.verbose("plm", 1, "starting daemon %u on %s", vpid, host.c_str());
  auto child = start_piped_child(ssh_argv(config_, vpid), {},
                                 "grove: cannot execute the ssh agent named by plm_ssh_agent");
  if (!child) {
    if (hooks_.on_failed)
      hooks_.on_failed(vpid, "cannot start ssh to " + host + ": " + child.error().message);
    return;
  }
  auto client = std::make_unique<Client>();
  client->owner = this;
  client->vpid = vpid;
  client->pid = child->pid;
  client->in_fd = child->in_fd;
  client->out_fd = child->out_fd;
  client->err_fd = child->err_fd;
  // Written as ssh reads it (only once it has logged in): a blocking write
  // of a large plan would stall the loop for as long as the login takes.
  Client* raw = client.get();
  client->in_event = IoWatch(base_, client->in_fd, IoReady::write, IoRepeat::persist,
                             [this, raw] { write_bootstrap_part(*raw); });
  client->in_event.enable();
  client->out_event = IoWatch(base_, client->out_fd, IoReady::read, IoRepeat::persist,
                              [this, raw] { read_output(*raw, false); });
  client->err_event = IoWatch(base_, client->err_fd, IoReady::read, IoRepeat::persist,
                              [this, raw] { read_output(*raw, true); });
  client->out_event.enable();
  client->err_event.enable();
  ++launching_;
  clients_[child->pid] = std::move(client);
}

void SshLauncher::write_bootstrap_part(Client& client) {
  while (client.in_written < bootstrap_bytes_.size()) {
    ssize_t wrote = write(client.in_fd, bootstrap_bytes_.data() + client.in_written,
                          bootstrap_bytes_.size() - client.in_written);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // ssh is not reading yet
    if (wrote <= 0) {
      client.err_tail.push_back("(ssh ended before reading the bootstrap)");
      break;
    }
    client.in_written += static_cast<std::size_t>(wrote);
  }
  // All written, or ssh is gone: our end closes, the remote side sees EOF.
  client.in_event = IoWatch();
  close(client.in_fd);
  client.in_fd = -1;
}

void SshLauncher::read_output(Client& client, bool is_stderr) {
  const int fd = is_stderr ? client.err_fd : client.out_fd;
  std::string& buffer = is_stderr ? client.err_buffer : client.out_buffer;
  char chunk[4096];
  for (;;) {
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) (is_stderr ? client.err_event : client.out_event) = IoWatch();
      break;
    }
    buffer.append(chunk, static_cast<std::size_t>(got));
  }
  const std::string host = config_.bootstrap.plan->daemons[client.vpid].host.name;
  for (auto newline = buffer.find('\n'); newline != std::string::npos;
       newline = buffer.find('\n')) {
    std::string line = buffer.substr(0, newline);
    buffer.erase(0, newline + 1);
    if (!is_stderr) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      // A remote login script may print before us without a newline.
      if (!client.up && line.size() >= kDaemonUpLine.size() &&
          line.compare(line.size() - kDaemonUpLine.size(), kDaemonUpLine.size(), kDaemonUpLine) ==
              0) {
        client.up = true;
        --launching_;
        log_.verbose("plm", 1, "daemon %u on %s is up", client.vpid, host.c_str());
        start_queued();
      }
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // The remote daemon's own log lines pass through (they name it); the
    // tail is what a failed launch shows.
    std::fprintf(stderr, "%s\n", line.c_str());
    client.err_tail.push_back(line);
    if (client.err_tail.size() > kTailLines) client.err_tail.pop_front();
  }
}

void SshLauncher::reap() {
  // Out of the table before any hook runs: a finished launch may start the
  // next one, whose fork may reuse a reaped pid.
  std::vector<std::pair<std::unique_ptr<Client>, int>> ended;
  for (auto it = clients_.begin(); it != clients_.end();) {
    int status = 0;
    if (waitpid(it->first, &status, WNOHANG) == it->first) {
      ended.emplace_back(std::move(it->second), status);
      it = clients_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [client, status] : ended)
    finish(*client, status);
}

void SshLauncher::finish(Client& client, int status) {
  // Whatever the client wrote before it ended is still in the pipes.
  if (client.out_event) read_output(client, false);
  if (client.err_event) read_output(client, true);
  client.in_event = IoWatch();
  client.out_event = IoWatch();
  client.err_event = IoWatch();
  if (client.in_fd >= 0) close(client.in_fd);
  close(client.out_fd);
  close(client.err_fd);
  const std::string host = config_.bootstrap.plan->daemons[client.vpid].host.name;
  if (client.up) {
    log_.verbose("plm", 1, "the ssh session of daemon %u on %s ended (%s)", client.vpid,
                 host.c_str(), describe_exit(status).c_str());
    return;
  }
  --launching_;
  std::string reason = "ssh to " + host + " " + describe_exit(status);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 255) reason += " (ssh could not connect)";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) reason += " (command not found)";
  if (!client.err_tail.empty()) {
    reason += "; last lines:";
    for (const auto& line : client.err_tail)
      reason += "\n    " + line;
  }
  if (hooks_.on_failed) hooks_.on_failed(client.vpid, reason);
  start_queued();
}

}  // namespace grove
