// How a daemon starts its ranks of a job: in slices, one per pass of the
// loop. Each slice is readied first (the PMIx registrations, answered later
// on the loop, never waited for), then forked, held, let go together and
// watched; the next slice comes on a later pass. So a job of thousands of
// ranks here costs the daemon's heartbeats and frames at most one slice of
// forks at a time, and a PMIx server slow to answer costs them nothing.
#include <sys/resource.h>

#include <algorithm>
#include <csignal>

#include "jobs/host/job_host.h"
#include "jobs/host/job_host_rank.h"

namespace grove {

std::size_t JobHost::slice_size() {
  // Held ranks keep four pipes open each, running ones two: well within the
  // open-file limit.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return 256;
  return std::clamp<std::size_t>(static_cast<std::size_t>(files.rlim_cur) / 16, 16, 256);
}

void JobHost::launch(const JobSpec& spec) {
  nspaces_[spec.job] = spec.nspace;
  newest_launched_ = std::max(newest_launched_, spec.job);
  report(job_host::JobNoted{&spec});
  directories_->make(spec.job);
  auto launch = std::make_unique<Launch>();
  launch->host = this;
  launch->spec = spec;
  for (const RankPlacement& placement : spec.ranks) {
    if (placement.daemon == self_) launch->ranks.push_back(placement.rank);
  }
  launch->next_pass = Timer(base_, [this, job = spec.job] { next_slice(job); });
  launches_[spec.job] = std::move(launch);
  next_slice(spec.job);
}

void JobHost::next_slice(std::uint32_t job) {
  auto found = launches_.find(job);
  if (found == launches_.end()) return;
  Launch& launch = *found->second;
  if (launch.next >= launch.ranks.size()) {
    finish_launch(job);
    return;
  }
  const std::size_t end = std::min(launch.ranks.size(), launch.next + slice_size());
  std::vector<std::uint32_t> slice(launch.ranks.begin() + static_cast<std::ptrdiff_t>(launch.next),
                                   launch.ranks.begin() + static_cast<std::ptrdiff_t>(end));
  launch.next = end;
  if (launch.killed) {
    run_slice(job, std::move(slice), {});
    return;
  }
  setup_.prepare_ranks(
      launch.spec, slice,
      [this, alive = std::weak_ptr<bool>(alive_), job, slice](RankSetup::RankFailures failed) {
        if (!alive.expired()) run_slice(job, slice, std::move(failed));
      });
}

void JobHost::run_slice(std::uint32_t job, std::vector<std::uint32_t> ranks,
                        RankSetup::RankFailures failed) {
  auto found = launches_.find(job);
  if (found == launches_.end()) return;  // forgotten meanwhile
  Launch& launch = *found->second;
  const JobSpec& spec = launch.spec;
  // Every rank of the slice is forked before any is let go: a rank that runs
  // early spins in MPI_Init (waiting for the others) on the cores the daemon
  // needs to start the rest.
  std::vector<std::unique_ptr<HeldRank>> forked;
  for (std::uint32_t rank : ranks) {
    if (launch.killed) {
      never_forked(job, rank, "", SIGTERM);
    } else if (auto why = failed.find(rank); why != failed.end()) {
      never_forked(job, rank, why->second);
    } else if (auto started = start_held(spec, spec.ranks[rank],
                                         static_cast<std::uint32_t>(launch.ranks.size()))) {
      forked.push_back(std::move(started));
    }
  }
  RanksStarted started{job, {}};
  for (auto& rank : forked)
    let_go(*rank);
  for (auto& rank : forked) {
    watch_rank(spec, *rank);
    if (rank->rank->start_error.empty()) started.ranks.push_back(rank->rank->rank);
  }
  // Sent before the loop runs again, so before any of these ranks' exits.
  if (!started.ranks.empty()) report(std::move(started));
  // The rest on a later pass: what waits on the loop (heartbeats, frames,
  // these ranks' output) runs first. (Looked up again: the reports above ran
  // the daemon's code.)
  found = launches_.find(job);
  if (found == launches_.end()) return;
  found->second->next_pass.arm(0);
}

void JobHost::finish_launch(std::uint32_t job) {
  launches_.erase(job);
  // Input that came before every rank here had started (a control frame can
  // overtake the launch's broadcast) goes in now, in order.
  auto early = waiting_stdin_.extract(job);
  if (!early.empty()) {
    for (auto& [input, ack] : early.mapped())
      on_stdin(input, std::move(ack));
  }
}

void JobHost::never_forked(std::uint32_t job, std::uint32_t rank, const std::string& why,
                           int signal) {
  auto record = std::make_unique<Rank>();
  record->host = this;
  record->job = job;
  record->rank = rank;
  record->exited = true;
  record->closed[0] = record->closed[1] = true;
  record->start_error = why;
  record->wait_status = signal;  // as waitpid reports a death by that signal
  Rank& r = *record;
  ranks_[{job, rank}] = std::move(record);
  maybe_report(r);
}

}  // namespace grove
