#include "jobs/host/job_host.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "jobs/host/job_host_rank.h"
#include "jobs/host/rank_spawn.h"
#include "jobs/rank_identity.h"
#include "os/process_scan.h"
#include "util/text.h"

extern char** environ;

namespace grove {

namespace {

bool make_pipe(ChildPipe& pipe) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return false;
  pipe.read = Fd(ends[0]);
  pipe.write = Fd(ends[1]);
  return true;
}

std::string signal_name(int signal) {
  const char* name = strsignal(signal);
  return name != nullptr ? name : "signal " + std::to_string(signal);
}

}  // namespace

JobHost::JobHost(event_base* base, Vpid self, const Log& log, std::string session_dir,
                 RankSetup& setup, job_host::ReportFn report, std::uint64_t output_window)
    : base_(base),
      self_(self),
      log_(log),
      directories_(std::make_unique<JobDirectories>(log, std::move(session_dir))),
      setup_(setup),
      report_(std::move(report)),
      output_window_(output_window),
      // A handshake is answered within milliseconds; 5 s covers a loaded host
      // and still ends a job whose rank stopped halfway through its request.
      signaller_(std::make_unique<QuietSignaller>(
          base,
          [this](const std::vector<pid_t>& ranks) { return setup_.handshakes_pending(ranks); },
          TimeNs{5'000'000'000})) {}

JobHost::~JobHost() {
  signaller_.reset();  // what waits is signalled now, while the ranks are still ours
  for (auto& [key, rank] : ranks_) {
    if (rank->pid > 0 && !rank->exited) {
      kill(-rank->pid, SIGKILL);
      waitpid(rank->pid, nullptr, 0);
    }
  }
  // A job still running on other daemons (this one leaves the DVM alone):
  // only what came from its ranks here is ours to end. Other daemons on
  // this host run ranks of the same jobs, with the same environment.
  for (const auto& [job, nspace] : nspaces_) {
    std::set<std::uint32_t> here;
    for (const auto& [key, rank] : ranks_) {
      if (key.first == job) here.insert(key.second);
    }
    if (!here.empty()) end_stragglers(job, nspace, &here);
  }
}

std::size_t JobHost::running() const {
  std::size_t count = 0;
  for (const auto& [key, rank] : ranks_)
    count += rank->reported ? 0 : 1;
  return count;
}

bool JobHost::on_broadcast(std::uint16_t tag, std::span<const std::byte> payload) {
  if (tag == job_tags::launch) {
    auto spec = wire_decode<JobSpec>(payload);
    if (!spec) {
      log_.error("%s", spec.error().message.c_str());
      return true;
    }
    launch(*spec);
    return true;
  }
  if (tag == job_tags::kill || tag == job_tags::cleanup) {
    auto ref = wire_decode<JobRef>(payload);
    if (!ref) return true;
    if (tag == job_tags::kill) {
      kill_job(ref->job);
    } else {
      forget(ref->job);
    }
    return true;
  }
  if (tag == job_tags::signal) {
    auto sent = wire_decode<JobSignal>(payload);
    if (!sent) {
      log_.error("%s", sent.error().message.c_str());
      return true;
    }
    const std::uint32_t job = sent->job;
    if (!live_groups(job).empty())
      signaller_->signal([this, job] { return live_groups(job); }, sent->signal);
    return true;
  }
  return false;
}

std::unique_ptr<JobHost::HeldRank> JobHost::start_held(const JobSpec& spec,
                                                       const RankPlacement& placement,
                                                       std::uint32_t local_size) {
  auto rank = std::make_unique<Rank>();
  rank->host = this;
  rank->job = spec.job;
  rank->rank = placement.rank;
  Rank& r = *rank;
  ranks_[{spec.job, placement.rank}] = std::move(rank);
  directories_->make_rank(spec.job, placement.rank);  // PMIX_PROCDIR

  auto fail = [&](const std::string& why) {
    r.exited = true;
    r.closed[0] = r.closed[1] = true;
    r.start_error = why;
    maybe_report(r);
    return nullptr;
  };
  std::vector<std::string> env;
  if (!spec.env_replaces) {
    for (char** entry = environ; *entry != nullptr; ++entry)
      env.emplace_back(*entry);
  }
  auto add_env = [&env](const std::string& entry) {
    std::string name = entry.substr(0, entry.find('='));
    std::erase_if(env, [&](const std::string& existing) {
      return existing.compare(0, name.size() + 1, name + "=") == 0;
    });
    env.push_back(entry);
  };
  const JobApp& app = spec.apps[spec.app_of(placement.rank)];
  for (const auto& entry : spec.env)
    add_env(entry);
  for (const auto& entry : app.env)
    add_env(entry);
  // Who it is, as mpirun tells Open MPI's ranks: over the user's, like mpirun.
  for (const auto& entry :
       rank_identity_env(placement, static_cast<std::uint32_t>(spec.ranks.size()), local_size))
    add_env(entry);
  // The shell's idea of the directory follows the directory it runs in
  // (never the daemon's, nor the caller's when --wdir moved it).
  if (!app.cwd.empty()) add_env("PWD=" + app.cwd);
  auto extra = setup_.rank_env(spec, placement.rank);
  if (!extra) return fail(extra.error().message);
  for (const auto& entry : extra->env)
    add_env(entry);
  RankSpawn spawn;
  auto binding = setup_.rank_cpus(spec, placement.rank);
  if (!binding) return fail(binding.error().message);
  if (*binding) {
    if (!(*binding)->cpus.empty()) spawn.cpus = (*binding)->cpus;
    if (spec.report_bindings) {
      emit_output(r, OutputStream::err,
                  "grove: rank " + std::to_string(placement.rank) + " bound to " +
                      (*binding)->description + "\n");
    }
  }
  // Owned ends: whatever fails half way, nothing leaks.
  auto forked = std::make_unique<HeldRank>();
  forked->rank = &r;
  if (!make_pipe(forked->out_pipe) || !make_pipe(forked->err_pipe) ||
      !make_pipe(forked->exec_pipe) || !make_pipe(forked->go_pipe) ||
      (spec.reads_stdin(placement.rank) && !make_pipe(forked->in_pipe))) {
    return fail(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  spawn.argv = app.argv;
  spawn.env = std::move(env);
  spawn.cwd = app.cwd;
  spawn.stdin_fd = forked->in_pipe.read.valid() ? forked->in_pipe.read.get() : -1;
  spawn.stdout_fd = forked->out_pipe.write.get();
  spawn.stderr_fd = forked->err_pipe.write.get();
  spawn.go_fd = forked->go_pipe.read.get();
  spawn.exec_fd = forked->exec_pipe.write.get();
  spawn.pmi_fd = extra->pmi.get();  // ours closes when `extra` goes: the child has its copy
  if (grove_exec_.empty()) {
    auto helper = find_grove_exec();
    if (!helper) return fail(helper.error().message);
    grove_exec_ = *helper;
  }
  auto started = spawn_rank(grove_exec_, spawn);
  if (!started) return fail(started.error().message);
  const pid_t pid = started->pid;
  // Known before it can exec its program: the PMIx server admits a rank's
  // connection by the process that makes it.
  report(job_host::RankForked{&spec, placement.rank, pid});
  forked->pid = pid;
  forked->bind_error = started->bind_error;
  // The child's ends go now: EOF on out, err and exec means the child's.
  forked->out_pipe.write.reset();
  forked->err_pipe.write.reset();
  forked->exec_pipe.write.reset();
  forked->go_pipe.read.reset();
  forked->in_pipe.read.reset();
  return forked;
}

void JobHost::let_go(HeldRank& forked) {
  if (forked.bind_error != 0) {  // it never starts: its go pipe closes unwritten
    forked.rank->start_error =
        "cannot bind to the CPUs of --bind-to: " + std::string(std::strerror(forked.bind_error));
    forked.go_pipe.write.reset();
    return;
  }
  const char go = 1;
  ssize_t sent_go;
  do {
    sent_go = write(forked.go_pipe.write.get(), &go, 1);
  } while (sent_go < 0 && errno == EINTR);
  forked.go_pipe.write.reset();
  if (sent_go != 1) {  // it would wait for ever; reaped and reported as never started
    forked.rank->start_error = std::string("cannot let it exec: ") + std::strerror(errno);
    kill(forked.pid, SIGKILL);
  }
}

void JobHost::watch_rank(const JobSpec& spec, HeldRank& forked) {
  Rank& r = *forked.rank;
  const pid_t pid = forked.pid;
  ChildPipe& exec_pipe = forked.exec_pipe;
  // The exec pipe closes without data when exec succeeded.
  int code = 0;
  ssize_t got;
  do {
    got = read(exec_pipe.read.get(), &code, sizeof code);
  } while (got < 0 && errno == EINTR);
  exec_pipe.read.reset();
  r.pid = pid;
  r.pipes[0] = std::move(forked.out_pipe.read);
  r.pipes[1] = std::move(forked.err_pipe.read);
  if (forked.in_pipe.write.valid())
    r.input = std::make_unique<RankStdin>(base_, std::move(forked.in_pipe.write));
  if (got == static_cast<ssize_t>(sizeof code) && r.start_error.empty()) {
    const JobApp& app = spec.apps[spec.app_of(r.rank)];
    r.start_error = code >= 0 ? "cannot execute '" + app.argv[0] + "': " + std::strerror(code)
                              : "cannot start in '" + app.cwd + "': " + std::strerror(-code);
  }
  for (int which = 0; which < 2; ++which) {
    set_nonblocking(r.pipes[which].get());
    r.watches[which] = IoWatch(base_, r.pipes[which].get(), IoReady::read, IoRepeat::persist,
                               [this, &r, which] { on_readable(r, which); });
    r.watches[which].enable();
  }
  log_.verbose("daemon", 2, "job %u rank %u started as pid %d", spec.job, r.rank, pid);
}

void JobHost::maybe_report(Rank& rank) {
  // The exit goes out after the last output, so the controller sees them in order.
  if (rank.reported || !rank.exited || !rank.closed[0] || !rank.closed[1]) return;
  rank.reported = true;
  RankExit exit{rank.job, rank.rank, ExitKind::exited, 0, "", {}};
  if (!rank.start_error.empty()) {
    exit.kind = ExitKind::failed_start;
    exit.status = 127;
    exit.message = rank.start_error;
  } else if (WIFSIGNALED(rank.wait_status)) {
    exit.kind = ExitKind::signaled;
    exit.status = WTERMSIG(rank.wait_status);
    exit.message = signal_name(exit.status);
  } else {
    exit.status = WEXITSTATUS(rank.wait_status);
  }
  report(std::move(exit));
}

void JobHost::reap() {
  // Reporting can run arbitrary code (the controller's job table) that may
  // come back here, so collect first and report after.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> exited;
  for (auto& [key, rank] : ranks_) {
    if (rank->pid <= 0 || rank->exited) continue;
    int status = 0;
    if (waitpid(rank->pid, &status, WNOHANG) == rank->pid) {
      rank->exited = true;
      rank->wait_status = status;
      exited.push_back(key);
    }
  }
  for (const auto& key : exited) {
    // Its pid is free for anyone from now on.
    report(job_host::RankReaped{key.first, key.second});
    auto found = ranks_.find(key);
    if (found == ranks_.end()) continue;
    maybe_report(*found->second);
    if (!found->second->reported) close_pipes_later(key);
  }
}

void JobHost::close_pipes_later(std::pair<std::uint32_t, std::uint32_t> key) {
  // A rank's own children may keep its stdout open after it exited; its exit
  // must not wait for them forever. Whatever they write after this is lost.
  run_later(base_, 2000, [this, alive = std::weak_ptr<bool>(alive_), key] {
    if (alive.expired()) return;
    auto found = ranks_.find(key);
    if (found == ranks_.end()) return;
    Rank& rank = *found->second;
    for (int which = 0; which < 2; ++which) {
      if (rank.closed[which]) continue;
      rank.watches[which] = IoWatch();
      rank.pipes[which].reset();
      rank.closed[which] = true;
    }
    maybe_report(rank);
  });
}

void JobHost::kill_job(std::uint32_t job, int grace_ms) {
  // A job being ended drains its pipes whatever the controller's pace: its
  // exits are reported only after its output.
  if (auto launch = launches_.find(job); launch != launches_.end()) launch->second->killed = true;
  OutputFlow& flow = flows_[job];
  flow.unbounded = true;
  if (flow.paused) {
    flow.paused = false;
    set_job_reading(job, true);
  }
  if (live_groups(job).empty()) return;
  signaller_->signal([this, job] { return live_groups(job); }, SIGTERM);
  Timer& timer = kill_timers_[job] = Timer(base_, [this, job] {
    signaller_->signal([this, job] { return live_groups(job); }, SIGKILL);
    kill_timers_.erase(job);  // frees this timer: nothing of it is used below
  });
  timer.arm(grace_ms);
}

std::vector<RankStdin*> JobHost::stdin_readers(std::uint32_t job) const {
  std::vector<RankStdin*> readers;
  for (const auto& [key, rank] : ranks_) {
    if (key.first == job && rank->input) readers.push_back(rank->input.get());
  }
  return readers;
}

std::vector<pid_t> JobHost::live_groups(std::uint32_t job) const {
  std::vector<pid_t> groups;
  for (const auto& [key, rank] : ranks_) {
    if (key.first == job && rank->pid > 0 && !rank->exited) groups.push_back(rank->pid);
  }
  return groups;
}

void JobHost::forget(std::uint32_t job) {
  // Deferred to the loop: this may be reached from inside a rank's own callback.
  run_later(base_, 0, [this, alive = std::weak_ptr<bool>(alive_), job] {
    if (!alive.expired()) erase_job(job);
  });
}

void JobHost::end_stragglers(std::uint32_t job, const std::string& nspace,
                             const std::set<std::uint32_t>* ranks) {
  std::size_t ended = 0;
  for (const ProcessEnvironment& process :
       processes_with_environment("PMIX_NAMESPACE=" + nspace, "PMIX_RANK")) {
    if (ranks != nullptr) {
      auto rank = parse_int(process.value);
      if (!rank || *rank < 0 || !ranks->contains(static_cast<std::uint32_t>(*rank))) continue;
    }
    ended += kill(process.pid, SIGKILL) == 0 ? 1 : 0;
  }
  if (ended > 0) {
    log_.verbose("daemon", 1, "job %u: ended %zu processes its ranks left behind", job, ended);
  }
}

void JobHost::erase_job(std::uint32_t job) {
  launches_.erase(job);
  flows_.erase(job);
  waiting_stdin_.erase(job);
  auto nspace = nspaces_.find(job);
  std::string ended_nspace;
  if (nspace != nspaces_.end()) {
    ended_nspace = nspace->second;
    report(job_host::JobForgotten{job, nspace->second});
    nspaces_.erase(nspace);
  }
  // Whatever the ranks left behind in their process groups ends with the job,
  // and so does what left them (setsid, a double fork) but kept the job's
  // environment.
  for (auto& [key, rank] : ranks_) {
    if (key.first == job && rank->pid > 0) kill(-rank->pid, SIGKILL);
  }
  if (!ended_nspace.empty()) end_stragglers(job, ended_nspace, nullptr);
  for (auto it = ranks_.begin(); it != ranks_.end();) {
    if (it->first.first == job && it->second->reported) {
      it = ranks_.erase(it);
    } else {
      ++it;
    }
  }
  // The job's directories go with it, on every daemon: each made them when
  // the launch arrived.
  directories_->remove(job);
}

}  // namespace grove
