// Starts daemons on other hosts through ssh (or the agent plm_ssh_agent
// names): one ssh client per daemon, its standard input carrying the
// bootstrap (secret and spawn plan), its output read here. A launch holds one
// of plm_ssh_num_concurrent slots until its daemon prints that it is up (the
// controller has welcomed it); a client that ends before that is a failed
// launch, reported with the host and the last lines the remote side printed.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "os/event_ptr.h"
#include "os/io_watch.h"
#include "plm/bootstrap.h"
#include "plm/remote_launcher.h"
#include "util/log.h"
#include "util/text.h"  // shell_quote

namespace grove {

// The line a daemon started over ssh prints on its standard output once the
// controller has welcomed it.
inline constexpr std::string_view kDaemonUpLine = "grove-daemon-up";

struct SshLaunchConfig {
  std::vector<std::string> agent = {"ssh"};
  std::uint32_t max_concurrent = 128;
  std::vector<std::string> param_arguments;  // --mca NAME VALUE ..., passed on
  Bootstrap bootstrap;                       // plan and remote settings set
  // Daemons grown into a running DVM (grove grow): started with --join.
  bool joining = false;
};

// The remote shell command that starts daemon `vpid` (sh syntax; every piece
// from the plan or the user is quoted).
std::string remote_daemon_command(const SshLaunchConfig& config, Vpid vpid);
// The ssh argv for daemon `vpid`: agent, BatchMode for ssh, target, command.
std::vector<std::string> ssh_argv(const SshLaunchConfig& config, Vpid vpid);

class SshLauncher : public RemoteLauncher {
 public:
  struct Hooks {
    // Before it was up: which daemon, on which host, and why.
    std::function<void(Vpid vpid, const std::string& reason)> on_failed;
  };
  SshLauncher(event_base* base, Log& log, SshLaunchConfig config, Hooks hooks);
  // Ends every ssh client still running (SIGTERM, then reaps what it can).
  ~SshLauncher() override;
  SshLauncher(const SshLauncher&) = delete;
  SshLauncher& operator=(const SshLauncher&) = delete;

  // Starts (or queues, past the cap) the launch of each vpid.
  void launch(const std::vector<Vpid>& vpids);
  // Reaps ssh clients that have exited (call on SIGCHLD).
  void reap() override;
  // Clients still running.
  std::size_t running() const override { return clients_.size(); }
  void signal_all(int signal) override;

 private:
  struct Client {
    SshLauncher* owner = nullptr;
    Vpid vpid = 0;
    int pid = 0;
    bool up = false;
    int in_fd = -1;  // until the bootstrap is written
    std::size_t in_written = 0;
    int out_fd = -1;
    int err_fd = -1;
    IoWatch in_event;
    IoWatch out_event;
    IoWatch err_event;
    std::string out_buffer;
    std::string err_buffer;
    std::deque<std::string> err_tail;
  };
  void start(Vpid vpid);
  void start_queued();
  void read_output(Client& client, bool is_stderr);
  void write_bootstrap_part(Client& client);
  void finish(Client& client, int status);

  event_base* base_;
  Log& log_;
  SshLaunchConfig config_;
  Bytes bootstrap_bytes_;  // encoded once; written to each client without blocking
  Hooks hooks_;
  std::deque<Vpid> queue_;
  std::uint32_t launching_ = 0;                     // started, not yet up
  std::map<int, std::unique_ptr<Client>> clients_;  // by pid
};

}  // namespace grove
