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

bool all_groups_gone() {
  for (auto& slot : tracked) {
    pid_t group = slot.load();
    if (group > 0 && kill(-group, 0) == 0) return false;
  }
  return true;
}

void pause_50ms() {
  timespec pause{0, 50'000'000};
  nanosleep(&pause, nullptr);
}

// SIGTERM lets a controller stop its daemons; three seconds, then SIGKILL.
// Run by a helper of its own group: meson SIGKILLs the test's group half a
// second after its SIGTERM, which would cut the program's own wait short.
[[noreturn]] void escalate_in_helper() {
  for (int round = 0; round < 60 && !all_groups_gone(); ++round)
    pause_50ms();
  for (auto& slot : tracked) {
    pid_t group = slot.load();
    if (group > 0) kill(-group, SIGKILL);
  }
  _exit(0);
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
  // _Fork, not fork: fork's atfork handlers (malloc's locks) are not
  // async-signal-safe; the helper only calls kill, nanosleep and _exit.
  const pid_t helper = _Fork();
  if (helper == 0) {
    setpgid(0, 0);
    escalate_in_helper();
  }
  if (helper > 0) setpgid(helper, helper);  // out of reach of meson's SIGKILL at once
  // Meanwhile reap: a group's leader is our child, and its zombie would keep
  // the group alive for the helper.
  for (int round = 0; helper > 0 && round < 80; ++round) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (kill(helper, 0) != 0) break;
    pause_50ms();
  }
  if (helper < 0) {  // no helper: do its work here, as far as meson lets us
    for (int round = 0; round < 60 && !all_groups_gone(); ++round) {
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      pause_50ms();
    }
    for (auto& slot : tracked) {
      pid_t group = slot.exchange(0);
      if (group > 0) kill(-group, SIGKILL);
    }
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

pid_t fork_tracked_group() {
  sigset_t handled, before;
  sigemptyset(&handled);
  for (int sig : kHandled)
    sigaddset(&handled, sig);
  sigprocmask(SIG_BLOCK, &handled, &before);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
  } else if (pid > 0) {
    setpgid(pid, pid);  // either side may win the race; both ask the same
    track_child_group(pid);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  return pid;
}

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
