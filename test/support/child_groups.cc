#include "support/child_groups.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace grove::test {
namespace {

constexpr int kSlots = 256;
constexpr int kHandled[] = {SIGTERM, SIGINT, SIGHUP};
std::atomic<pid_t> tracked[kSlots];
// A child forked without exec inherits this handler and a copy of the
// table; only the program that tracked the groups may end them.
pid_t owner = 0;

bool group_gone(pid_t group) {
  // The leader is our child: reap it, or the zombie keeps the group alive.
  waitpid(group, nullptr, WNOHANG);
  return kill(-group, 0) != 0 && errno == ESRCH;
}

void end_tracked_groups(int sig) {
  if (getpid() != owner) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  for (auto& slot : tracked) {
    pid_t group = slot.load();
    if (group > 0) kill(-group, SIGTERM);
  }
  // SIGTERM lets a controller stop its daemons; give them three seconds.
  for (int round = 0; round < 60; ++round) {
    bool all_gone = true;
    for (auto& slot : tracked) {
      pid_t group = slot.load();
      if (group > 0 && !group_gone(group)) all_gone = false;
    }
    if (all_gone) break;
    timespec pause{0, 50'000'000};
    nanosleep(&pause, nullptr);
  }
  for (auto& slot : tracked) {
    pid_t group = slot.exchange(0);
    if (group > 0) kill(-group, SIGKILL);
  }
  // Die of the signal, as if no handler had been there.
  signal(sig, SIG_DFL);
  raise(sig);
}

// Installed before main(), so Catch2's own handler (set per test case)
// finds this one as the previous handler and hands the signal on to it.
struct InstallHandler {
  InstallHandler() {
    owner = getpid();
    struct sigaction action {};
    action.sa_handler = end_tracked_groups;
    sigemptyset(&action.sa_mask);
    for (int sig : kHandled)
      sigaddset(&action.sa_mask, sig);
    for (int sig : kHandled) {
      struct sigaction previous {};
      // A signal the caller chose to ignore (nohup) stays ignored.
      if (sigaction(sig, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
      sigaction(sig, &action, nullptr);
    }
  }
} const install_handler;

}  // namespace

void track_child_group(pid_t group) {
  for (auto& slot : tracked) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void untrack_child_group(pid_t group) {
  for (auto& slot : tracked) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace grove::test
