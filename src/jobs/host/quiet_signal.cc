#include "jobs/host/quiet_signal.h"

#include <signal.h>

#include <algorithm>
#include <set>

#include "os/proc_stat.h"

namespace grove {

namespace {

constexpr int kPollMs = 5;

// 0 if the process is gone.
std::uint64_t start_ticks(pid_t pid) {
  const auto stat = read_proc_stat(pid);
  return stat ? stat->start_ticks : 0;
}

bool is_stop(int signal) {
  return signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU;
}

// Signals that end a user's stop: SIGCONT itself, SIGKILL, and SIGTERM and
// SIGHUP, which a shell follows with SIGCONT for a stopped job so that they
// take effect. Any other signal waits in a stopped rank, as under kill(1).
bool ends_stop(int signal) {
  return signal == SIGCONT || signal == SIGKILL || signal == SIGTERM || signal == SIGHUP;
}

}  // namespace

bool process_stopped_or_gone(pid_t pid) {
  const auto stat = read_proc_stat(pid);
  if (!stat) return true;
  const char state = stat->state;
  return state == 'T' || state == 't' || state == 'Z' || state == 'X';
}

QuietSignaller::QuietSignaller(event_base* base, HandshakesPending pending, TimeNs max_wait_ns)
    : base_(base), pending_(std::move(pending)), max_wait_ns_(max_wait_ns) {}

QuietSignaller::~QuietSignaller() {
  // Whatever still waits is signalled now: a daemon that leaves must not
  // leave ranks stopped behind it.
  for (auto& request : requests_) {
    request->timer = Timer();
    for (pid_t group : request->groups()) {
      kill(-group, request->signal);
      kill(-group, SIGCONT);
    }
  }
}

void QuietSignaller::signal(Groups groups, int signal) {
  std::vector<pid_t> now = groups();
  if (now.empty()) return;
  if (!pending_) {
    for (pid_t group : now)
      kill(-group, signal);
    return;
  }
  // A rank grove kill stopped but something else resumed (kill -CONT on its
  // node) is the user's stop no longer. Not judged for a group a request
  // still holds: that request's own SIGCONTs (a handshake let finish) resume it.
  std::set<pid_t> held;
  for (const auto& request : requests_) {
    for (pid_t group : request->groups())
      held.insert(group);
  }
  std::erase_if(stopped_by_user_, [&held](const auto& entry) {
    if (held.contains(entry.first)) return false;
    const auto stat = read_proc_stat(entry.first);
    return !stat || stat->start_ticks != entry.second || (stat->state != 'T' && stat->state != 't');
  });
  for (pid_t group : now)
    kill(-group, SIGSTOP);
  auto request = std::make_unique<Request>();
  request->groups = std::move(groups);
  request->signal = signal;
  request->deadline_ns = monotonic_now_ns() + max_wait_ns_;
  Request* raw = request.get();
  request->timer = Timer(base_, [this, raw] { on_tick(*raw); });
  Request& queued = *request;
  requests_.push_back(std::move(request));
  // Often settled at once (no rank in PMIx_Init): then the signal goes now.
  if (std::all_of(now.begin(), now.end(), process_stopped_or_gone) && settle(queued.groups())) {
    finish(queued);
    return;
  }
  arm(queued, kPollMs);
}

bool QuietSignaller::settle(const std::vector<pid_t>& groups) const {
  const std::set<pid_t> unanswered = pending_(groups);
  bool settled = unanswered.empty();
  for (pid_t group : groups) {
    if (unanswered.count(group) != 0) {
      kill(-group, SIGCONT);  // let it finish the handshake it began
    } else if (!process_stopped_or_gone(group)) {
      kill(-group, SIGSTOP);  // answered: nothing more to wait for from it
      settled = false;        // stopped at the next look
    }
  }
  return settled;
}

void QuietSignaller::arm(Request& request, int delay_ms) {
  request.timer.arm(delay_ms);
}

void QuietSignaller::on_tick(Request& request) {
  if (!settle(request.groups()) && monotonic_now_ns() < request.deadline_ns) {
    arm(request, kPollMs);
    return;
  }
  finish(request);
}

void QuietSignaller::finish(Request& request) {
  // A stop signal (grove kill --signal STOP) is meant to leave the ranks
  // stopped: they are, at a point where no handshake waits, so no SIGCONT.
  // Nor after a later signal that does not end that stop: the SIGCONT here
  // only undoes this signaller's own SIGSTOP.
  const int signal = request.signal;
  std::erase_if(stopped_by_user_,
                [](const auto& entry) { return start_ticks(entry.first) != entry.second; });
  // A stop asked for earlier but still settling is the user's stop too: the
  // rank already looks stopped, and a signal sent after it must wait in it.
  std::set<pid_t> stopping;
  for (const auto& other : requests_) {
    if (other.get() == &request || !is_stop(other->signal)) continue;
    for (pid_t group : other->groups())
      stopping.insert(group);
  }
  for (pid_t group : request.groups()) {
    kill(-group, signal);
    if (is_stop(signal)) {
      stopped_by_user_[group] = start_ticks(group);
      continue;
    }
    if (ends_stop(signal)) stopped_by_user_.erase(group);
    if (stopped_by_user_.count(group) == 0 && stopping.count(group) == 0) kill(-group, SIGCONT);
  }
  requests_.remove_if([&](const std::unique_ptr<Request>& held) { return held.get() == &request; });
}

}  // namespace grove
