// What the controller needs of whichever launcher (ssh, srun) started the
// daemons on other hosts, once they run: its client processes reaped, counted
// and, at a stop that hangs, signalled.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace grove {

enum class RemoteLauncherKind { ssh, slurm };

class RemoteLauncher {
 public:
  virtual ~RemoteLauncher() = default;
  // Reaps client processes that have exited (call on SIGCHLD).
  virtual void reap() = 0;
  // Client processes still running.
  virtual std::size_t running() const = 0;
  virtual void signal_all(int signal) = 0;
};

// Every launcher a DVM has used: the start's, and one per grove grow over
// ssh (each holds the sessions of the daemons it started). Launchers with
// no client left are dropped as they are reaped.
class RemoteLaunchers final : public RemoteLauncher {
 public:
  void add(std::unique_ptr<RemoteLauncher> launcher) { launchers_.push_back(std::move(launcher)); }
  void clear() { launchers_.clear(); }
  void reap() override {
    for (auto& launcher : launchers_)
      launcher->reap();
    std::erase_if(launchers_, [](const auto& launcher) { return launcher->running() == 0; });
  }
  std::size_t running() const override {
    std::size_t count = 0;
    for (const auto& launcher : launchers_)
      count += launcher->running();
    return count;
  }
  void signal_all(int signal) override {
    for (auto& launcher : launchers_)
      launcher->signal_all(signal);
  }

 private:
  std::vector<std::unique_ptr<RemoteLauncher>> launchers_;
};

}  // namespace grove
